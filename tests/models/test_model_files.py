"""Model files (:mod:`carnac_env.models.files`) read as untrusted input.

Every hostile file below is refused with a CarnacError that names the file, before anything
large is allocated: each refusal runs under ``tracemalloc`` (numpy's buffers and every bytes
object are traced) and must peak under :data:`PEAK_BYTES`, far below what the file claims.
The shipped models round-trip through ``save`` and ``load``, and a fuzz test mutates real
model files (bytes flipped, truncated, members dropped, duplicated or reordered): ``load``
only ever returns a network or raises a CarnacError.
"""

from __future__ import annotations

import io
import json
import struct
import tracemalloc
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from carnac_env.errors import CarnacError
from carnac_env.models import PolicyValueNet, generations, load, save, shipped_models, specialists
from carnac_env.models.files import MAX_HEADER_BYTES, MAX_MEMBERS

#: The most a refusal may allocate (the real models are 250 KB; the hostile files claim GBs).
PEAK_BYTES = 8 * 1024 * 1024
SMALL = specialists()["small"]
#: Every model file in the package: the defaults, the specialists and the frozen generations.
ALL_SHIPPED = {**shipped_models(), **specialists(), **generations()}


# ---------------------------------------------------------------- building files
def members_of(path: Path) -> list[tuple[str, bytes]]:
    """The (name, uncompressed bytes) of every member of a real model file, in order."""
    with zipfile.ZipFile(path) as archive:
        return [(info.filename, archive.read(info)) for info in archive.infolist()]


def npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=True)
    return out.getvalue()


def npy_with_header(header: str, data: bytes = b"") -> bytes:
    """An .npy member with a hand-written header dict (version 1.0), then ``data``."""
    text = header.encode("latin1")
    pad = 64 - (10 + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + data


def header_member(header: dict | str) -> bytes:
    text = header if isinstance(header, str) else json.dumps(header)
    return npy(np.frombuffer(text.encode(), dtype=np.uint8))


def real_header() -> dict:
    return json.loads(dict(members_of(SMALL))["__header__.npy"][128:].decode())


def write(path: Path, members: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name" when a test duplicates a member
        with zipfile.ZipFile(path, "w", compression=method) as archive:
            for name, data in members:
                archive.writestr(name, data)
    return path


def replaced(path: Path, changes: dict[str, bytes | None]) -> Path:
    """The small model with members replaced, by parameter name (``None``: dropped)."""
    members = []
    for name, data in members_of(SMALL):
        key = name[: -len(".npy")]
        if key not in changes:
            members.append((name, data))
        elif changes[key] is not None:
            members.append((name, changes[key]))
    return write(path, members)


def with_header(path: Path, header: dict | str) -> Path:
    members = [(n, d) for n, d in members_of(SMALL) if n != "__header__.npy"]
    return write(path, [("__header__.npy", header_member(header)), *members])


def patch_declared_size(path: Path, member: str, size: int) -> None:
    """Make the archive's directory and local header declare ``size`` uncompressed bytes."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    struct.pack_into("<L", data, info.header_offset + 22, size)
    entry = 0
    while True:
        entry = data.find(b"PK\x01\x02", entry)
        name_length = struct.unpack_from("<H", data, entry + 28)[0]
        if data[entry + 46 : entry + 46 + name_length] == member.encode():
            break
        entry += 4
    struct.pack_into("<L", data, entry + 24, size)
    path.write_bytes(bytes(data))


def refused(path: Path, *words: str) -> str:
    """Load ``path``: a CarnacError naming the file (and ``words``), allocating little."""
    tracemalloc.start()
    try:
        with pytest.raises(CarnacError) as caught:
            load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(caught.value)
    assert str(path) in message, message
    for word in words:
        assert word in message, message
    assert peak < PEAK_BYTES, f"refusing {path.name} allocated {peak} bytes"
    return message


# ---------------------------------------------------------------- the shipped models
@pytest.mark.parametrize("name", sorted(ALL_SHIPPED))
def test_shipped_models_round_trip(tmp_path, name):
    net = load(ALL_SHIPPED[name])
    save(net, tmp_path / "again.npz")
    again = load(tmp_path / "again.npz")
    assert again.header == net.header
    assert sorted(again.params) == sorted(net.params)
    for key, value in net.params.items():
        np.testing.assert_array_equal(again.params[key], value)
        assert again.params[key].dtype == np.float32
    obs = np.zeros((2, net.rows, net.cols, 9), np.int8)
    obs[1, 0, 0, 0] = 1
    for a, b in zip(net.forward(obs), again.forward(obs)):
        np.testing.assert_array_equal(a, b)


def test_save_replaces_a_planted_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    target = tmp_path / "model.npz"
    target.symlink_to(victim)
    save(load(SMALL), target)
    assert victim.read_text() == "keep me" and not target.is_symlink()
    assert isinstance(load(target), PolicyValueNet)


# ---------------------------------------------------------------- the header
def test_a_250_kb_header_asking_for_100000000_blocks(tmp_path):
    header = real_header()
    header["architecture"]["blocks"] = 100_000_000
    header["training"] = {"notes": "x" * 250_000}
    text = json.dumps(header)
    assert 250_000 < len(text) < MAX_HEADER_BYTES
    refused(with_header(tmp_path / "blocks.npz", text), "blocks=100000000", "0..32")


def test_a_header_larger_than_the_limit(tmp_path):
    header = real_header()
    header["training"] = {"notes": "x" * (MAX_HEADER_BYTES + 10)}
    refused(with_header(tmp_path / "large.npz", header), "header is")


def test_a_deeply_nested_header(tmp_path):
    header = real_header()
    text = json.dumps(header)[:-1] + ', "training": ' + "[" * 100_000 + "]" * 100_000 + "}"
    refused(with_header(tmp_path / "nested.npz", text), "nests deeper")


@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN", "1e400", "32.0", '"32"', "true", "null", "-1"])
def test_architecture_numbers_that_are_not_whole(tmp_path, value):
    text = json.dumps(real_header()).replace('"channels": 32', f'"channels": {value}')
    assert value in text
    refused(
        with_header(tmp_path / "channels.npz", text),
        "channels" if value not in ("Infinity", "-Infinity", "NaN") else value,
    )


def test_a_number_with_a_million_digits(tmp_path):
    text = json.dumps(real_header()).replace('"hidden": 64', '"hidden": ' + "9" * 200_000)
    refused(with_header(tmp_path / "digits.npz", text))


@pytest.mark.parametrize("version", [True, False, "2", 2.0, 4, 0, None])
def test_versions_other_than_1_2_and_3(tmp_path, version):
    header = dict(real_header(), version=version)
    refused(with_header(tmp_path / "version.npz", header), "version")


@pytest.mark.parametrize(
    "header",
    ["[1, 2]", '"carnac-az"', "{}", '{"format": "other", "version": 2}', "not json at all", "\udcff"],
)
def test_headers_that_are_not_a_model_header(tmp_path, header):
    if header == "\udcff":  # not UTF-8
        data = npy(np.frombuffer(b'{"format": "\xff"}', dtype=np.uint8))
        path = replaced(tmp_path / "utf8.npz", {"__header__": data})
    else:
        path = with_header(tmp_path / "header.npz", header)
    refused(path)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("megaliths", 0),
        ("megaliths", -28),
        ("megaliths", 10**30),
        ("rows", True),
        ("rows", "5"),
        ("rows", 5.5),
        ("cols", 0),
        ("cols", 10**6),
        ("min_dolmen", 0),
        ("name", 7),
        ("last_tilt", "yes"),
    ],
)
def test_board_fields_out_of_range(tmp_path, field, value):
    header = real_header()
    header["board"][field] = value
    refused(with_header(tmp_path / "board.npz", header), field)


def test_a_header_without_a_board_or_architecture(tmp_path):
    for key in ("board", "architecture"):
        header = real_header()
        del header[key]
        refused(with_header(tmp_path / f"no-{key}.npz", header), key)


def test_the_header_member_claiming_a_huge_shape(tmp_path):
    data = npy_with_header("{'descr': '|u1', 'fortran_order': False, 'shape': (1099511627776,), }", b"{}")
    refused(replaced(tmp_path / "hshape.npz", {"__header__": data}))


# ---------------------------------------------------------------- the archive
def test_a_member_declaring_far_more_than_its_shape(tmp_path):
    """A zip bomb: stem.bias (32 floats) declared as 1 GB in the archive's directory."""
    members = members_of(SMALL)
    path = write(tmp_path / "declared.npz", members)
    patch_declared_size(path, "stem.bias.npy", 1 << 30)
    refused(path, "stem.bias")


def test_a_member_decompressing_to_far_more_than_declared(tmp_path):
    """A zip bomb that lies: stem.bias declared at its true size, but its compressed stream
    holds 32 MB more (zeros, 32 KB compressed)."""
    members = [(n, d + bytes(32 << 20) if n == "stem.bias.npy" else d) for n, d in members_of(SMALL)]
    path = write(tmp_path / "bomb.npz", members)
    true_size = len(dict(members_of(SMALL))["stem.bias.npy"])
    patch_declared_size(path, "stem.bias.npy", true_size)
    assert path.stat().st_size < 1 << 20
    refused(path, "stem.bias")


def test_a_parameter_claiming_shape_2_40(tmp_path):
    data = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }", bytes(128))
    refused(replaced(tmp_path / "shape.npz", {"stem.bias": data}), "stem.bias", "shape")


@pytest.mark.parametrize(
    "array",
    [
        np.array(["a"] * 32),
        np.zeros(32, np.complex64),
        np.zeros(32, [("re", "<f4"), ("im", "<f4")]),
        np.zeros(32, np.float64),
        np.zeros(32, ">f4"),
        np.zeros(32, np.int32),
        np.zeros(32, np.float16),
        np.asfortranarray(np.zeros((32, 9, 3, 3), np.float32)),
    ],
    ids=["text", "complex", "structured", "float64", "big-endian", "int32", "float16", "fortran"],
)
def test_parameters_that_are_not_little_endian_float32(tmp_path, array):
    name = "stem.weight" if array.ndim == 4 else "stem.bias"
    refused(replaced(tmp_path / "dtype.npz", {name: npy(array)}), name)


def test_a_pickled_parameter_never_runs(tmp_path):
    marker = tmp_path / "ran.txt"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    array = np.empty(32, dtype=object)
    array[:] = [Payload() for _ in range(32)]
    refused(replaced(tmp_path / "pickle.npz", {"stem.bias": npy(array)}), "stem.bias")
    assert not marker.exists()


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nan_and_infinite_weights(tmp_path, value):
    weight = load(SMALL).params["blocks.1.conv2.weight"].copy()
    weight[3, 2, 1, 0] = value
    refused(replaced(tmp_path / "nan.npz", {"blocks.1.conv2.weight": npy(weight)}), "blocks.1.conv2.weight", "NaN")


def test_a_missing_and_an_extra_parameter(tmp_path):
    refused(replaced(tmp_path / "missing.npz", {"value2.weight": None}), "value2.weight", "missing")
    members = [*members_of(SMALL), ("blocks.3.conv1.weight.npy", npy(np.zeros((32, 32, 3, 3), np.float32)))]
    refused(write(tmp_path / "extra.npz", members), "blocks.3.conv1.weight", "unexpected")


def test_a_parameter_of_the_wrong_shape_or_cut_short(tmp_path):
    refused(replaced(tmp_path / "shape.npz", {"stem.bias": npy(np.zeros(31, np.float32))}), "stem.bias", "shape")
    short = npy(np.zeros(32, np.float32))[:-8]
    refused(replaced(tmp_path / "short.npz", {"stem.bias": short}), "stem.bias")
    longer = npy(np.zeros(32, np.float32)) + bytes(64)
    refused(replaced(tmp_path / "long.npz", {"stem.bias": longer}), "stem.bias")


def test_an_npy_file_renamed_npz(tmp_path):
    path = tmp_path / "model.npz"
    np.save(path.with_suffix(".npy"), np.zeros(10, np.float32))
    path.with_suffix(".npy").rename(path)
    refused(path, "not a readable .npz")


def test_other_members_and_archives(tmp_path):
    refused(write(tmp_path / "text.npz", [*members_of(SMALL), ("notes.txt", b"hi")]), "notes.txt")
    refused(write(tmp_path / "dir.npz", [*members_of(SMALL), ("folder/", b"")]), "folder/")
    no_header = [(n, d) for n, d in members_of(SMALL) if n != "__header__.npy"]
    refused(write(tmp_path / "noheader.npz", no_header), "no JSON header")
    duplicated = members_of(SMALL)
    duplicated.append(duplicated[3])
    refused(write(tmp_path / "twice.npz", duplicated), duplicated[3][0], "twice")
    many = [*members_of(SMALL), *((f"x{i}.npy", b"") for i in range(MAX_MEMBERS))]
    refused(write(tmp_path / "many.npz", many), "members")
    refused(write(tmp_path / "bzip2.npz", members_of(SMALL), method=zipfile.ZIP_BZIP2), "compress")
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    refused(empty)
    refused(tmp_path / "absent.npz", "does not exist")


def test_a_directory_of_200000_entries(tmp_path):
    """10 MB of directory entries (all naming one member) behind an end record that claims
    100: zipfile would build 200,000 entries; refused from the end record first."""
    name = b"a.npy"
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0) + name
    entry = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0, 0)
    directory = (entry + name) * 200_000
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 100, 100, len(directory), len(local), 0)
    path = tmp_path / "directory.npz"
    path.write_bytes(local + directory + end)
    refused(path, "directory")
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 1000, len(local), 0)
    path.write_bytes(local + directory[:1000] + end)
    refused(path, "65535 members")


def test_a_file_larger_than_the_limit(tmp_path):
    path = tmp_path / "huge.npz"
    with open(path, "wb") as out:  # sparse: no disk used
        out.truncate(300 << 20)
    refused(path, "bytes")


# ---------------------------------------------------------------- fuzz
MODEL_BYTES = SMALL.read_bytes()
MODEL_MEMBERS = members_of(SMALL)


@st.composite
def mutated_models(draw) -> bytes:
    kind = draw(st.sampled_from(["flip", "truncate", "members"]))
    if kind == "flip":
        data = bytearray(MODEL_BYTES)
        for _ in range(draw(st.integers(1, 8))):
            # half the flips in the archive's directory and the last member's tail
            if draw(st.booleans()):
                at = draw(st.integers(0, len(data) - 1))
            else:
                at = len(data) - 1 - draw(st.integers(0, 4000))
            data[at] = draw(st.integers(0, 255))
        return bytes(data)
    if kind == "truncate":
        return MODEL_BYTES[: draw(st.integers(0, len(MODEL_BYTES) - 1))]
    members = list(MODEL_MEMBERS)
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["drop", "duplicate", "swap", "empty"]))
        i = draw(st.integers(0, len(members) - 1))
        j = draw(st.integers(0, len(members) - 1))
        if action == "drop" and len(members) > 1:
            members.pop(i)
        elif action == "duplicate":
            members.append(members[i])
        elif action == "swap":  # one member's data under another's name
            members[i] = (members[i][0], members[j][1])
        elif action == "empty":
            members[i] = (members[i][0], b"")
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(
            out, "w", compression=draw(st.sampled_from([zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED]))
        ) as z:
            for name, data in members:
                z.writestr(name, data)
    return out.getvalue()


@settings(deadline=None, max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=mutated_models())
def test_mutated_model_files_give_a_network_or_a_carnac_error(tmp_path, data):
    path = tmp_path / "mutated.npz"
    path.write_bytes(data)
    try:
        net = load(path)
    except CarnacError as err:
        assert str(path) in str(err)
    else:
        assert isinstance(net, PolicyValueNet)
        logits, values = net.forward(np.zeros((1, 5, 8, 9), np.int8))
        assert np.isfinite(logits).all() and np.isfinite(values).all()


def test_a_changed_byte_under_the_old_checksum(tmp_path):
    """A stored (uncompressed) member with one weight's byte changed, its checksum left as it was."""
    path = write(tmp_path / "stored.npz", MODEL_MEMBERS, method=zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("stem.weight.npy")
    name_length, extra_length = struct.unpack_from("<HH", data, info.header_offset + 26)
    data[info.header_offset + 30 + name_length + extra_length + 200] ^= 0x40
    path.write_bytes(bytes(data))
    refused(path, "stem.weight")
