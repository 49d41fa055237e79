from ragdiff.cli.main import entry

if __name__ == "__main__":  # multiprocessing's spawned helpers import this module too
    entry()
