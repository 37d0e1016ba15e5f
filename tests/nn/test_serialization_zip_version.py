"""Issue 34, sweep 3's leftovers (make sweep-extremes): single flipped bits that zipfile itself refuses, with
exceptions that are RuntimeErrors (or a subclass) but do not name the file, where the promise is minigrad's one
RuntimeError naming it: a central header's "version needed to extract" (45 for zip64 on Python 3.11+, 20 on 3.10)
with its 0x40 bit set, above zipfile's highest (6.3: NotImplementedError "zip file version 10.9", when the archive is
opened) and its encryption flag set (RuntimeError
"... is encrypted, password required for extraction", when a member is opened)."""

from __future__ import annotations

import io

import pytest

import minigrad

NAME = "damaged.pt"
CENTRAL = b"PK\x01\x02"


@pytest.mark.parametrize(("offset", "refused", "bit"), [(6, lambda v: v > 63, 0x40), (8, lambda v: v & 1, 0x01)],
                         ids=["version", "encrypted"])
def test_a_bit_zipfile_refuses_names_the_file(offset, refused, bit):
    b = io.BytesIO()
    minigrad.save({"w": minigrad.ones(2), "b": [minigrad.zeros(1)]}, b)
    data = bytes(b.getvalue())
    at = data.find(CENTRAL)
    assert at >= 0
    while at >= 0:  # (each member's central header in turn)
        damaged = bytearray(data)
        assert not refused(damaged[at + offset])
        damaged[at + offset] ^= bit
        assert refused(damaged[at + offset])  # (a flip zipfile itself refuses)
        f = io.BytesIO(bytes(damaged))
        f.name = NAME
        with pytest.raises(RuntimeError, match=f"minigrad.load: {NAME} is not a valid minigrad file"):
            minigrad.load(f)
        at = data.find(CENTRAL, at + 1)
