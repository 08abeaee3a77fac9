__version__ = "0.1.0"

#: The versions of dpverify that have been released. Certificates they wrote stay
#: verifiable (tests/certificate/format1 and format2 are frozen sets of them), and a
#: sweep cache entry naming one of them is used once the independent verifier has
#: confirmed it; an entry naming any other version (one that never existed, such as
#: "0.0.9", adv37 L2) is not, so a cache writer cannot choose the release label of a
#: sweep's output certificates. A release adds its version here.
RELEASES: tuple[str, ...] = ("0.1.0",)
