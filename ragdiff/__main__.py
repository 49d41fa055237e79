from ragdiff.cli.main import main

if __name__ == "__main__":  # multiprocessing's spawned helpers import this module too
    raise SystemExit(main())
