"""A throwaway certificate authority for the TLS mock (openssl(1), stdlib only).

    ca = TestCa(directory)                       # ca.pem / ca.key in directory
    cert, key = ca.leaf("mock", ["chatgpt.com", "api.openai.com"])

The CA stands in for the public roots the wall trusts on its upstream leg: the seat config's
[egress] upstream_ca names ca.pem. Leaves carry what strict TLS stacks demand (subjectAltName,
serverAuth, both key identifiers, an EC P-256 key).
"""
import pathlib
import subprocess

LEAF_EXT = """[leaf]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = {san}
"""


def _openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


class TestCa:
    __test__ = False  # not a unittest case

    def __init__(self, directory, name="agent-sandbox test upstream CA"):
        self.dir = pathlib.Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.cert, self.key = self.dir / "ca.pem", self.dir / "ca.key"
        _openssl("req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", str(self.key), "-out", str(self.cert), "-days", "2", "-subj", "/CN=" + name,
                 "-addext", "basicConstraints=critical,CA:TRUE,pathlen:0",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def leaf(self, tag, names):
        key, csr, cert = (self.dir / (tag + s) for s in (".key", ".csr", ".pem"))
        ext = self.dir / (tag + ".ext")
        ext.write_text(LEAF_EXT.format(san=",".join("DNS:" + n for n in names)))
        _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key),
                 "-out", str(csr), "-subj", "/CN=" + names[0])
        _openssl("x509", "-req", "-in", str(csr), "-CA", str(self.cert), "-CAkey", str(self.key), "-CAcreateserial",
                 "-out", str(cert), "-days", "1", "-extfile", str(ext), "-extensions", "leaf", "-sha256")
        return cert, key
