"""The pipeline that runs the steps (:mod:`.pipeline`) and what it reports (:mod:`.load_info`)."""
