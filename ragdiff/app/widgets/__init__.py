"""Small widgets of the review screen, one per file."""
