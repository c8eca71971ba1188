"""RSA key pairs for GitHub App tests (generated once per name and process: keygen is slow)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


@dataclass(frozen=True)
class AppKey:
    """A private key for the client and its public half for the fake."""

    private_pem: str
    public_pem: str


@functools.cache
def app_key(name: str = "default") -> AppKey:
    """A 2048-bit RSA key pair; the same `name` returns the same pair."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return AppKey(private.decode(), public.decode())
