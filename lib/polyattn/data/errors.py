class DatasetMissing(RuntimeError):
    """A dataset is not on this machine; the message says how to get it."""
