# The version of the C library these bindings are written for: the top CMakeLists.txt's
# project(vkformer VERSION ...), checked by tests/python/test_loader.py against both that file and
# the loaded library's vkformer_version().
__version__ = "0.1.0"
