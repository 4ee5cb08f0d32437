"""Stand-in for pypa's get-pip.py, used by ansible-test to bootstrap pip in its venvs.

ansible-test downloads get-pip.py from ci-files.testing.ansible.com, which cannot be
reached here; PyPI can. Like get-pip.py, this puts pip into the interpreter running it
(from the interpreter's bundled wheel) and then installs the requested packages.
"""
import ensurepip
import os
import subprocess
import sys

# get-pip.py's own flags; pip itself does not know them.
GET_PIP_ONLY = {"--no-setuptools", "--no-wheel"}

# ensurepip drops PIP_* settings and points PIP_CONFIG_FILE at /dev/null in this process;
# the real install must see the machine's pip configuration (index, CA bundle).
environment = dict(os.environ)
ensurepip.bootstrap(upgrade=True)
args = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "-q", "--upgrade"] + args, env=environment))
