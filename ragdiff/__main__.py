from ragdiff.cli.main import main

raise SystemExit(main())
