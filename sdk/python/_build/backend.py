"""A PEP 517 build backend for the berth SDK, with the standard library only:
it builds a pure-Python wheel (PEP 427) of the package `berth`. pip calls it
when it installs ./sdk/python; nothing is downloaded."""

import base64
import hashlib
import os
import zipfile

NAME, VERSION = "berth", "0.1.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIST = f"{NAME}-{VERSION}.dist-info"
METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: Run AI workloads with the hardware they declare: the client of berth serve
Requires-Python: >=3.8
"""
WHEEL = """Wheel-Version: 1.0
Generator: berth-sdk-backend
Root-Is-Purelib: true
Tag: py3-none-any
"""


def _files():
    pkg = os.path.join(ROOT, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name), "rb") as f:
                yield f"{NAME}/{name}", f.read()


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, DIST)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(METADATA)
    with open(os.path.join(d, "WHEEL"), "w") as f:
        f.write(WHEEL)
    return DIST


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        entries = list(_files()) + [(f"{DIST}/METADATA", METADATA.encode()),
                                    (f"{DIST}/WHEEL", WHEEL.encode())]
        for path, data in entries:
            z.writestr(path, data)
            records.append(_record_line(path, data))
        records.append(f"{DIST}/RECORD,,")
        z.writestr(f"{DIST}/RECORD", "\n".join(records) + "\n")
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    sdist = f"{NAME}-{VERSION}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, sdist), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", "_build/backend.py"] + [p for p, _ in _files()]:
            full = os.path.join(ROOT, rel)
            if os.path.exists(full):
                t.add(full, arcname=f"{NAME}-{VERSION}/{rel}")
    return sdist
