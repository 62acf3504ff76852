"""Step one: extract. Resources and sources (:mod:`.sources`) and the extractor that writes
any input into a load package (:mod:`.extractor`)."""
