"""The TinyAgent stream (gomlxmodel's Model.WriteTo) as both ports read it, with the standard library only:
"GOMLXTA1", the kind, the configuration (vocab, positions, d, heads, layers, MLP) and the step count as
little-endian uint64, then the weights, the Adam first and second moments, each tensor as its name, rank, dims and
float32 values."""

import struct


def read_weights(path, n_tensors):
    """Reads a policy's stream at path: its configuration [vocab, positions, d, heads, layers, MLP] and its first
    n_tensors tensors (the weights; the Adam moments after them are not read) as (name, dims, little-endian float32
    bytes), in order. Raises ValueError for a stream that is not a policy's or ends early."""
    data = open(path, "rb").read()
    off = 0

    def take(n):
        nonlocal off
        if off + n > len(data):
            raise ValueError(f"{path}: truncated TinyAgent stream")
        off += n
        return data[off - n : off]

    def u64():
        return struct.unpack("<Q", take(8))[0]

    if take(8) != b"GOMLXTA1":
        raise ValueError(f"{path}: not a TinyAgent stream")
    if (kind := take(u64()).decode()) != "policy":
        raise ValueError(f"{path}: holds a {kind}, want a policy")
    cfg = [u64() for _ in range(6)]
    u64()  # Adam steps
    tensors = []
    for _ in range(n_tensors):
        name = take(u64()).decode()
        dims = [u64() for _ in range(u64())]
        n = 1
        for d in dims:
            n *= d
        tensors.append((name, dims, take(4 * n)))
    return cfg, tensors
