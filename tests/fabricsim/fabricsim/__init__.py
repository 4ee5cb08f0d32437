"""fabricsim: a GPU/RDMA node simulator for the rdma.fabric collection tests.

Pure standard library (python >= 3.9).  See ../README.md.
"""
__version__ = "0.1.0"
