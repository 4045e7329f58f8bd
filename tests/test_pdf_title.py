"""The brief's PDF gets its own document title by an incremental update, checked by following the file's xrefs."""

from __future__ import annotations

import re

from components.services.pdf_title import pdf_text, with_title


def minimal_pdf(title: bytes = b"(Kaleido-fier)") -> bytes:
    """A one-page PDF with a classic cross-reference table, its offsets computed, as Chromium writes them."""
    objects = [b"<</Title %s>>" % title, b"<</Type /Catalog /Pages 3 0 R>>", b"<</Type /Pages /Kids [4 0 R] /Count 1>>",
               b"<</Type /Page /Parent 3 0 R /MediaBox [0 0 100 100]>>"]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 5\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<</Size 5\n/Root 2 0 R\n/Info 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % xref
    return out


def info_title(pdf: bytes) -> bytes:
    """The title a reader finds: the last trailer's /Info object, at the offset its xref section gives."""
    trailer = pdf[pdf.rindex(b"trailer"):]
    number = int(re.search(rb"/Info (\d+) 0 R", trailer).group(1))
    xref_at = int(re.search(rb"startxref\s+(\d+)", trailer).group(1))
    section = pdf[xref_at:]
    assert section.startswith(b"xref\n")
    first, count = map(int, re.match(rb"xref\n(\d+) (\d+)\n", section).groups())
    assert first <= number < first + count
    entry = section.split(b"\n")[2 + number - first]
    offset = int(entry[:10])
    assert pdf[offset:].startswith(b"%d 0 obj" % number)
    return re.search(rb"/Title\s*(\([^)]*\)|<[0-9A-F]+>)", pdf[offset:offset + 400]).group(1)


def test_the_title_is_replaced_and_the_file_before_it_kept_byte_for_byte():
    original = minimal_pdf()
    assert info_title(original) == b"(Kaleido-fier)"
    titled = with_title(original, "Brief: EASY on RICC – 14 % less wait")
    assert titled.startswith(original) and titled.endswith(b"%%EOF\n")
    assert info_title(titled) == pdf_text("Brief: EASY on RICC – 14 % less wait")
    prev = int(re.search(rb"/Prev (\d+)", titled[titled.rindex(b"trailer"):]).group(1))
    assert prev == int(re.search(rb"startxref\s+(\d+)", original).group(1))
    # Titled twice: the newest wins, the chain of /Prev stays whole.
    again = with_title(titled, "second")
    assert info_title(again) == pdf_text("second") and again.startswith(titled)


def test_text_is_utf16_with_its_byte_order_mark():
    assert pdf_text("Aé") == b"<FEFF004100E9>"


def test_a_file_without_a_classic_trailer_comes_back_unchanged():
    for data in (b"%PDF-1.7\n1 0 obj\n<</Type /XRef>>\nendobj\nstartxref\n9\n%%EOF\n", b"not a pdf"):
        assert with_title(data, "x") == data
