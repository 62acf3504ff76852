"""What survives a crash: load packages (:mod:`.load_package`) and pipeline state (:mod:`.state`)."""
