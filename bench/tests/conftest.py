# bench/'s scripts are not a package: the tests import them from bench/ itself.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
