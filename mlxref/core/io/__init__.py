"""Saving and loading arrays: .npy, .npz and safetensors (``formats``) and
GGUF (``gguf``), in pure Python from the formats' specifications."""

from .formats import load, save, save_safetensors, savez, savez_compressed  # noqa: F401
from .gguf import save_gguf  # noqa: F401
