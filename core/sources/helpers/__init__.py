"""``loadstone.sources.helpers``: what dlt users reach as ``dlt.sources.helpers``.

``rest_client`` is the HTTP client under the ``rest_api`` source, usable on its own in
hand-written resources (``RESTClient(...).paginate(path)``).
"""
