"""Reading inputs: runs (one reader per format), the corpus, text files and format sniffing."""
