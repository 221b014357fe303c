"""PDF full text: sandboxed parsing (PyMuPDF runs only in child processes), hidden-text detection
and metadata from the PDF itself. Importing this package does not load MuPDF."""

from ingest.pdf.document import HiddenText, ParsedPdf, PdfLimits, PdfMetadata, PdfPage, PdfRejected
from ingest.pdf.sandbox import PARSER_NAME, PARSER_VERSION, PdfParserPool, default_pool, parse_pdf

__all__ = [
    "PARSER_NAME",
    "PARSER_VERSION",
    "HiddenText",
    "ParsedPdf",
    "PdfLimits",
    "PdfMetadata",
    "PdfPage",
    "PdfParserPool",
    "PdfRejected",
    "default_pool",
    "parse_pdf",
]
