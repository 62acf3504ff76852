"""What the three steps of a run share, below them: the working folder, the destination
target, the settings a run reads, the recorder and the load info it fills, ``refresh=``, and
what becomes of a package at the end of a step.

The steps (:mod:`loadstone.extract`, :mod:`loadstone.normalize`, :mod:`loadstone.load`) are
given these by the pipeline and import none of each other; the pipeline
(:mod:`loadstone.pipelines`) sits above them all.
"""
