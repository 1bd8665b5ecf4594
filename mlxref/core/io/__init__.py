"""Saving and loading arrays: .npy, .npz and safetensors (``formats``), in
pure Python from the formats' specifications."""

from .formats import load, save, save_gguf, save_safetensors, savez, savez_compressed  # noqa: F401
