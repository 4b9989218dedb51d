"""The pretraining data pipeline: tokens on disk, a blend of datasets, samples, a resumable order.

Four layers, in the manner of Megatron-LM's ``megatron/core/datasets``:

- **Indexed dataset** (:func:`write_indexed`, :class:`IndexedReader`): the tokens of all
  documents back to back in a ``.bin`` file, and an ``.idx`` file with each sequence's length
  and byte offset, read through a memory map so that a sample costs two array lookups and one
  slice, whatever the corpus size. The byte layout is Megatron's (``MMIDIDX`` header).
- **Samples** (:class:`GPTSamples`): the documents of each epoch in a shuffled order
  (*document index*), concatenated into one stream that is cut into samples of
  ``seq_length + 1`` tokens (*sample index*: where each sample starts), visited in a shuffled
  order (*shuffle index*). The three arrays are built once from a seed and cached on disk under
  a hash of everything they depend on.
- **Blend** (:func:`blending_indices`, :class:`BlendedSamples`): sample ``i`` of the blend
  comes from the dataset that is furthest behind its share ``weight * i``.
- **Sampler** (:class:`PretrainingSampler`): global batches of consecutive sample numbers
  from ``consumed_samples`` on, each data-parallel rank taking its slice. Resuming needs only
  that one integer.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Iterator, Sequence

import numpy

ROLE = "taught"

HEADER = b"MMIDIDX\x00\x00"
DTYPE_CODES = {
    numpy.uint8: 1,
    numpy.int8: 2,
    numpy.int16: 3,
    numpy.int32: 4,
    numpy.int64: 5,
    numpy.float64: 6,
    numpy.float32: 7,
    numpy.uint16: 8,
}


def write_indexed(
    prefix: str, documents: Sequence[Sequence[int]], dtype: type = numpy.uint16
) -> None:
    """Write ``prefix.bin`` (all tokens) and ``prefix.idx`` (the index), one sequence a document.

    ``.idx``: the 9-byte header, version 1 and the token dtype's code, the sequence and
    document counts, then three arrays: sequence lengths (int32), byte offsets of the sequences
    in ``.bin`` (int64), and the sequence numbers where documents start, with the total at the
    end (int64).
    """
    lengths = numpy.array([len(d) for d in documents], dtype=numpy.int32)
    itemsize = numpy.dtype(dtype).itemsize
    pointers = numpy.concatenate([[0], numpy.cumsum(lengths[:-1], dtype=numpy.int64)]) * itemsize
    doc_starts = numpy.arange(len(documents) + 1, dtype=numpy.int64)
    with open(prefix + ".bin", "wb") as f:
        for doc in documents:
            f.write(numpy.asarray(doc, dtype=dtype).tobytes(order="C"))
    with open(prefix + ".idx", "wb") as f:
        f.write(HEADER)
        f.write(struct.pack("<Q", 1))
        f.write(struct.pack("<B", DTYPE_CODES[dtype]))
        f.write(struct.pack("<Q", len(lengths)))
        f.write(struct.pack("<Q", len(doc_starts)))
        f.write(lengths.tobytes(order="C"))
        f.write(pointers.astype(numpy.int64).tobytes(order="C"))
        f.write(doc_starts.tobytes(order="C"))


class IndexedReader:
    """Read a ``.bin``/``.idx`` pair through memory maps; nothing is loaded up front."""

    def __init__(self, prefix: str) -> None:
        with open(prefix + ".idx", "rb") as f:
            if f.read(9) != HEADER or struct.unpack("<Q", f.read(8))[0] != 1:
                raise ValueError(f"{prefix}.idx: not an indexed dataset (version 1)")
            code = struct.unpack("<B", f.read(1))[0]
            self.dtype = next(t for t, c in DTYPE_CODES.items() if c == code)
            n_seq, n_doc = struct.unpack("<Q", f.read(8))[0], struct.unpack("<Q", f.read(8))[0]
            offset = f.tell()
        idx = numpy.memmap(prefix + ".idx", mode="r", order="C")
        self.sequence_lengths = numpy.frombuffer(idx, numpy.int32, n_seq, offset)
        offset += self.sequence_lengths.nbytes
        self.sequence_pointers = numpy.frombuffer(idx, numpy.int64, n_seq, offset)
        offset += self.sequence_pointers.nbytes
        self.document_indices = numpy.frombuffer(idx, numpy.int64, n_doc, offset)
        self.bin = numpy.memmap(prefix + ".bin", mode="r", order="C")

    def __len__(self) -> int:
        return len(self.sequence_lengths)

    def get(self, i: int, offset: int = 0, length: int | None = None) -> numpy.ndarray:
        """Tokens ``offset .. offset + length`` of sequence ``i`` (to its end by default)."""
        length = int(self.sequence_lengths[i]) - offset if length is None else length
        start = int(self.sequence_pointers[i]) + offset * numpy.dtype(self.dtype).itemsize
        return numpy.frombuffer(self.bin, self.dtype, length, start)


def sample_index(
    lengths: numpy.ndarray, doc_index: numpy.ndarray, seq_length: int
) -> numpy.ndarray:
    """Where each sample starts, as ``(position in doc_index, token offset in that document)``.

    The documents, in ``doc_index`` order, form one stream; sample ``i`` is its tokens
    ``i * seq_length`` to ``(i + 1) * seq_length`` inclusive (one extra token, the last
    target), so consecutive samples share one token. Row ``i + 1`` is where sample ``i`` ends.
    """
    total = int(lengths[doc_index].sum())
    n_samples = (total - 1) // seq_length
    out = numpy.zeros((n_samples + 1, 2), dtype=numpy.int64)
    doc, offset = 0, 0
    for i in range(1, n_samples + 1):
        remaining = seq_length  # advance seq_length tokens: the next sample starts there
        while remaining > 0:
            left_in_doc = int(lengths[doc_index[doc]]) - offset
            if left_in_doc > remaining:
                offset += remaining
                remaining = 0
            else:
                remaining -= left_in_doc
                doc, offset = doc + 1, 0
        out[i] = (doc, offset)
    return out


class GPTSamples:
    """Samples of ``seq_length + 1`` tokens drawn from an :class:`IndexedReader`.

    ``num_samples`` decides how many epochs of the documents are needed; the document order of
    all epochs and the sample order come from one ``numpy.random.RandomState(seed)``, in that
    order, so the same seed gives the same samples on every rank and on every restart. With
    ``cache_dir`` the three index arrays are saved under the hash of their description and
    loaded on the next build (``cache_hit`` tells which happened).
    """

    def __init__(
        self,
        reader: IndexedReader,
        seq_length: int,
        num_samples: int,
        seed: int,
        cache_dir: str | None = None,
    ) -> None:
        self.reader, self.seq_length = reader, seq_length
        lengths = reader.sequence_lengths
        docs = numpy.arange(len(reader), dtype=numpy.int32)
        tokens_per_epoch = int(lengths.sum())
        epochs = 1
        while epochs * tokens_per_epoch < num_samples * seq_length + 1:
            epochs += 1
        description = json.dumps(
            {
                "class": "GPTSamples",
                "documents": len(reader),
                "tokens": tokens_per_epoch,
                "seq_length": seq_length,
                "num_samples": num_samples,
                "seed": seed,
                "epochs": epochs,
            }
        )
        digest = hashlib.md5(description.encode()).hexdigest()
        paths = (
            {k: os.path.join(cache_dir, f"{digest}-{k}.npy") for k in ("doc", "sample", "shuffle")}
            if cache_dir
            else {}
        )
        self.cache_hit = bool(paths) and all(os.path.isfile(p) for p in paths.values())
        # Megatron keeps a last epoch that is used for less than 80% apart: its documents and
        # samples are shuffled on their own, after the complete epochs, so that the partial
        # epoch cannot push samples of the complete ones out of the run.
        separate = False
        if epochs > 1:
            n_before_last = ((epochs - 1) * tokens_per_epoch - 1) // seq_length
            per_epoch = (tokens_per_epoch - 1) // seq_length
            separate = num_samples - n_before_last < int(0.80 * per_epoch)
        self.epochs, self.separate_last_epoch = epochs, separate
        if self.cache_hit:
            self.doc_index, self.sample_idx, self.shuffle_idx = (
                numpy.load(paths[k], mmap_mode="r") for k in ("doc", "sample", "shuffle")
            )
            return
        rng = numpy.random.RandomState(seed)
        groups = [epochs - 1, 1] if separate else [epochs]
        doc_parts = []
        for n in groups:
            part = numpy.tile(docs, n).astype(numpy.int32)
            rng.shuffle(part)  # one shuffle over the documents of these epochs
            doc_parts.append(part)
        self.doc_index = numpy.concatenate(doc_parts)
        self.sample_idx = sample_index(lengths, self.doc_index, seq_length)
        total = len(self.sample_idx) - 1
        bounds = [0, n_before_last, total] if separate else [0, total]
        shuffle_parts = []
        for lo, hi in zip(bounds, bounds[1:], strict=False):
            part = numpy.arange(lo, hi, dtype=numpy.uint32)
            rng.shuffle(part)
            shuffle_parts.append(part)
        self.shuffle_idx = numpy.concatenate(shuffle_parts)
        if paths:
            os.makedirs(cache_dir, exist_ok=True)
            for k, arr in zip(
                ("doc", "sample", "shuffle"),
                (self.doc_index, self.sample_idx, self.shuffle_idx),
                strict=True,
            ):
                numpy.save(paths[k], arr)

    def __len__(self) -> int:
        return len(self.shuffle_idx)

    def __getitem__(self, i: int) -> numpy.ndarray:
        j = int(self.shuffle_idx[i])
        (d0, o0), (d1, o1) = self.sample_idx[j], self.sample_idx[j + 1]
        parts = []
        for d in range(int(d0), int(d1) + 1):
            start = int(o0) if d == d0 else 0
            stop = int(o1) + 1 if d == d1 else None  # +1: the extra target token
            parts.append(self.reader.get(int(self.doc_index[d]))[start:stop])
        return numpy.concatenate(parts).astype(numpy.int64)


def blending_indices(weights: Sequence[float], size: int) -> tuple[numpy.ndarray, numpy.ndarray]:
    """For each of ``size`` samples: which dataset, and which sample of that dataset.

    Greedy: sample ``i`` goes to the dataset whose count lags most behind ``weight * i``
    (``max(i, 1)``, as Megatron writes it), so every prefix of the blend keeps each dataset's
    count within one sample of its share.
    """
    w = numpy.asarray(weights, dtype=numpy.float64)
    w = w / w.sum()
    counts = numpy.zeros(len(w), dtype=numpy.int64)
    dataset = numpy.zeros(size, dtype=numpy.int16)
    within = numpy.zeros(size, dtype=numpy.int64)
    for i in range(size):
        error = w * max(i, 1) - counts
        d = int(numpy.argmax(error))  # the first of equal errors, as a strict '>' scan picks
        dataset[i], within[i] = d, counts[d]
        counts[d] += 1
    return dataset, within


class BlendedSamples:
    """Samples from several datasets in the proportions ``weights``."""

    def __init__(self, datasets: Sequence[GPTSamples], weights: Sequence[float], size: int) -> None:
        self.datasets = list(datasets)
        self.dataset_index, self.dataset_sample_index = blending_indices(weights, size)

    def __len__(self) -> int:
        return len(self.dataset_index)

    def __getitem__(self, i: int) -> tuple[int, numpy.ndarray]:
        d = int(self.dataset_index[i])
        return d, self.datasets[d][int(self.dataset_sample_index[i])]


class PretrainingSampler:
    """Sample numbers for one data-parallel rank, from ``consumed_samples`` on.

    Global batch ``k`` (of ``micro_batch * dp`` samples) is the next run of consecutive sample
    numbers; rank ``r`` takes the ``r``-th slice of ``micro_batch``. The position is the count
    of samples consumed by all ranks together, so a run restarted with a different number of
    data-parallel ranks still continues at the same sample.
    """

    def __init__(
        self, total: int, consumed_samples: int, micro_batch: int, dp_rank: int, dp_size: int
    ) -> None:
        if not 0 <= consumed_samples < total:
            raise ValueError(f"consumed_samples {consumed_samples} outside [0, {total})")
        self.total, self.consumed = total, consumed_samples
        self.micro_batch, self.rank, self.dp = micro_batch, dp_rank, dp_size

    def __iter__(self) -> Iterator[list[int]]:
        step = self.micro_batch * self.dp
        lo = self.rank * self.micro_batch
        for start in range(self.consumed, self.total - step + 1, step):
            yield list(range(start + lo, start + lo + self.micro_batch))
