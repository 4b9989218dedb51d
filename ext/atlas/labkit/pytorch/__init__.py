"""The PyTorch chapter's code: strided layouts, autograd's saved tensors, collectives' semantics,
a stream and CUDA-graph model, Dynamo's guard policy and Inductor's fusion, and a simulator of
the CUDA caching allocator. ``atlas.labkit.checks.pytorch`` holds the checks that compare each
with PyTorch.
"""

ROLE = "taught"
