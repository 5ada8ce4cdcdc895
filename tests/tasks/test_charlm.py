import pytest
import torch

from polyattn.data import charlm


def _books(n=23, length=300):
    g = torch.Generator().manual_seed(0)
    alphabet = "abcdefghij .,\n"
    out = {}
    for i in range(n):
        ids = torch.randint(0, len(alphabet), (length + 7 * i,), generator=g).tolist()
        name = f"book{i + 1:02d}"
        out[name] = f"[{name}] " + "".join(alphabet[j] for j in ids)
    out["book11"] += "Zq"       # characters only a validation book has
    return out


def test_split_is_by_book_disjoint_and_follows_the_rule():
    books = _books()
    s = charlm.split_books(books)
    assert s["test"] == ["book10", "book20"]
    assert s["validation"] == ["book11", "book21"]
    assert sorted(s["train"] + s["test"] + s["validation"]) == sorted(books)
    assert not set(s["train"]) & (set(s["test"]) | set(s["validation"]))
    assert s["train"] == [b for b in books if b in s["train"]]            # mapping order kept
    assert charlm.split_books(dict(list(books.items())[:9]))["test"] == []


def test_streams_hold_their_books_text_and_no_other():
    books = _books()
    c = charlm.build_corpus(books)
    for split in charlm.SPLITS:
        text = c.vocab.decode(c.stream(split))
        for name in books:
            inside = f"[{name}] " in text
            assert inside == (name in c.books[split]), (split, name)
    assert c.vocab.decode(c.stream("train")) == "\n".join(books[n] for n in c.books["train"])


def test_vocabulary_round_trip_and_unknown_characters():
    c = charlm.build_corpus(_books())
    v = c.vocab
    assert v.chars == tuple(sorted(v.chars)) and len(v) == len(v.chars) + 1
    text = "abc [book03] j.,\nd"
    ids = v.encode(text)
    assert ids.dtype == torch.long and (ids > 0).all()
    assert v.decode(ids) == text
    val = v.decode(c.stream("validation"))
    assert "Z" not in v.chars and "q" not in v.chars                      # only in a validation book
    assert v.encode("aZ").tolist() == [v.encode("a").item(), charlm.UNK]
    assert "\ufffd\ufffd" in val and "Zq" not in val


def test_random_windows_are_seeded_shifted_and_shaped():
    c = charlm.build_corpus(_books())
    stream = c.stream("train")
    a = next(charlm.batches(stream, 32, 5, seed=3))
    b = next(charlm.batches(stream, 32, 5, seed=3))
    other = next(charlm.batches(stream, 32, 5, seed=4))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) and not torch.equal(a[0], other[0])
    x, y = a
    assert x.shape == y.shape == (5, 32)
    assert torch.equal(x[:, 1:], y[:, :-1])
    text = c.vocab.decode(stream)
    for row in range(5):
        assert c.vocab.decode(torch.cat([x[row], y[row, -1:]])) in text
    it = charlm.batches(stream, 32, 5, seed=3)
    next(it)
    assert not torch.equal(next(it)[0], a[0])                            # the sequence moves on


@pytest.mark.parametrize("multiple", charlm.EVAL_MULTIPLES)
def test_eval_windows_are_consecutive_and_non_overlapping(multiple):
    c = charlm.build_corpus(_books())
    stream = c.stream("test")
    x, y = charlm.eval_windows(stream, 16, multiple)
    length = 16 * multiple
    assert x.shape[1] == length and x.shape[0] == (len(stream) - 1) // length
    torch.testing.assert_close(x.flatten(), stream[: x.numel()])
    torch.testing.assert_close(y.flatten(), stream[1: x.numel() + 1])
    assert charlm.eval_windows(stream, 16, multiple, max_windows=2)[0].shape == (2, length)


def test_too_short_streams_raise():
    with pytest.raises(ValueError):
        charlm.eval_windows(torch.arange(10), 16)
    with pytest.raises(ValueError):
        charlm.random_windows(torch.arange(10), 16, 2, torch.Generator())


def test_nope_model_sees_order_only_through_the_mask_and_bad_positions_raise():
    from polyattn.models.char_lm import CharLM

    torch.manual_seed(0)
    tokens = torch.full((1, 12), 3)
    nope = CharLM(10, "softmax", "micro", positions="none").eval()
    sinus = CharLM(10, "softmax", "micro").eval()
    with torch.no_grad():
        flat, moved = nope(tokens)[0], sinus(tokens)[0]
    # repeated tokens: softmax averages identical values, so without positions every row is the same
    assert torch.allclose(flat, flat[:1].expand_as(flat), atol=1e-5)
    assert not torch.allclose(moved, moved[:1].expand_as(moved), atol=1e-3)
    with pytest.raises(ValueError, match="unknown position encoding 'alibi'"):
        CharLM(10, "softmax", "micro", positions="alibi")


def test_charlm_options_are_checked_and_the_nope_grid_keeps_the_base_hashes():
    import dataclasses

    from polyattn.experiments import GRIDS
    from polyattn.tasks.charlm import CharLanguageModel

    base, nope = GRIDS["causal_charlm"]("smoke", seeds=[0]), GRIDS["causal_charlm_nope"]("smoke", seeds=[0])
    assert {c.options.get("positions") for c in nope} == {"none"} and all("positions" not in c.options for c in base)
    assert {(c.activation, c.n_mode) for c in nope} < {(c.activation, c.n_mode) for c in base}
    assert not {c.hash for c in nope} & {c.hash for c in base}
    bad = dataclasses.replace(base[0], options={**base[0].options, "context_len": 64})
    with pytest.raises(ValueError, match=r"unknown charlm option\(s\) \['context_len'\]"):
        CharLanguageModel().load(bad, 1, 0)
