"""Anchor glosses from real WordNet 3.0, and the classifier pipeline's glossed anchor scores."""

from __future__ import annotations

import logging
import sys
import threading

import pytest

from focused.errors import FocusedError
from focused.relevance.gloss import AnchorGlosser
from focused.relevance.keywords import KeywordModel
from focused.relevance.nouns import WordNetNouns
from focused.relevance.wordnet import (
    WORDNET_ENV,
    _index_path,
    _LemmaIndex,
    _WordNet,
    find_wordnet,
    load_wordnet,
)
from focused.topic.judge import Judge, anchor_glosser
from tests.pages import page


@pytest.fixture(scope="module")
def glosser() -> AnchorGlosser:
    return AnchorGlosser()


def test_a_name_is_glossed_with_its_definition_and_broader_terms(glosser):
    krypton = glosser.gloss("Krypton")
    assert "inert gas" in krypton and "chemical element" in krypton
    assert "African country" in glosser.gloss("Tanzania")  # an instance hypernym
    owl = glosser.gloss("Tawny Owls")  # plural: WordNet's morphology finds "tawny owl"
    assert "bird of prey" in owl and owl.split()[0] == "reddish-brown"


def nouns(step: int) -> list[str]:
    """Every ``step``-th noun of WordNet's index, as an anchor writes it."""
    lines = (find_wordnet() / "index.noun").read_text().splitlines()
    return [line.split()[0].replace("_", " ") for line in lines if line[0] != " "][::step]


class NltkNouns:
    """nltk's WordNet reader, asked for nouns as the glosser asks its own reader."""

    def __init__(self):
        self.wordnet = load_wordnet()

    def synsets(self, lemma):
        return self.wordnet.synsets(lemma, pos="n")


def test_glosses_are_those_nltks_reader_gives():
    """The glosser's own reader of WordNet's nouns: nltk's senses, in nltk's order (its
    morphology, its definitions, its hypernyms as the project's nltk reader keeps them)."""
    anchors = nouns(40)
    anchors += [f"{noun}s" for noun in anchors[::3]] + [f"{noun} of Laos" for noun in anchors[::5]]
    anchors += ["geese", "mice", "wolves", "churches", "ladies", "women", "Owls (birds)", "2004"]
    theirs = AnchorGlosser()
    theirs.wordnet = NltkNouns()
    glosser = AnchorGlosser()
    assert [glosser.gloss(anchor) for anchor in anchors] == [
        theirs.gloss(anchor) for anchor in anchors
    ]
    assert sum(map(bool, map(glosser.gloss, anchors))) > 0.9 * len(anchors)


def test_the_plain_file_reader_reads_what_nltks_own_streams_read():
    class NltkStreams(_WordNet):
        def open(self, file):
            return super().open(file) if file == "lexnames" else super(_WordNet, self).open(file)

    nltk_reader = NltkStreams(find_wordnet())
    plain = load_wordnet()
    assert plain._lemma_pos_offset_map == nltk_reader._lemma_pos_offset_map
    assert plain._exception_map == nltk_reader._exception_map
    assert plain.satellite_offsets == nltk_reader.satellite_offsets
    for reader in (plain, nltk_reader):  # a synset is read by seeking to its offset
        assert reader.synset("owl.n.01").hypernyms()[0].name() == "bird_of_prey.n.01"
    assert [s.definition() for s in plain.synsets("fast")] == [
        s.definition() for s in nltk_reader.synsets("fast")
    ]


def test_the_lemma_index_is_built_once_and_kept(glosser, tmp_path):
    folder = find_wordnet()
    kept = _index_path(folder, str(tmp_path))
    built = _WordNet(folder, kept)  # builds the index and writes it
    assert kept.is_file() and list(tmp_path.iterdir()) == [kept]
    again = _WordNet(folder, kept)  # reads it back
    index = again._lemma_pos_offset_map
    assert isinstance(index, _LemmaIndex) and not isinstance(
        built._lemma_pos_offset_map, _LemmaIndex
    )
    assert index == built._lemma_pos_offset_map
    assert list(again.all_lemma_names("n")) == list(built.all_lemma_names("n"))
    assert again.satellite_offsets == built.satellite_offsets
    for lemma in ("tawny_owls", "krypton", "music", "geese", "xqzzyv", "fast"):
        assert [s.definition() for s in again.synsets(lemma)] == [
            s.definition() for s in built.synsets(lemma)
        ]
    kept.write_text("not an index")  # a damaged file is built again and replaced
    assert _WordNet(folder, kept)._lemma_pos_offset_map == index
    assert _WordNet(folder, kept)._lemma_pos_offset_map == index
    assert kept.read_text().startswith("focused wordnet lemma index")


def test_lookups_fall_back_to_the_head_and_its_last_words(glosser):
    wordnet = load_wordnet()
    for anchor, sense in (
        ("Music of Thailand", "music.n.01"),
        ("Great Crested Grebe (bird)", "great_crested_grebe.n.01"),
        ("Lesser Spotted Grebe", "grebe.n.01"),
    ):
        assert glosser.synsets(anchor)[0].definition() == wordnet.synset(sense).definition()


def test_numbers_sentences_and_unknown_names_get_no_gloss(glosser):
    assert glosser.gloss("2004") == ""
    assert glosser.gloss("Xqzzyv") == ""
    assert glosser.gloss("read the whole story of how the owl got its name") == ""
    assert glosser.gloss("owl") != ""


def test_senses_and_depth_bound_the_gloss(glosser):
    assert "hawk" not in glosser.gloss("kite")  # the bird is WordNet's 4th sense of "kite"
    assert "hawk" in AnchorGlosser(senses=4).gloss("kite")
    shallow = AnchorGlosser(depth=1).gloss("Tawny Owl").split()
    assert "owl" in shallow and "prey" not in shallow  # owl <- bird of prey <- bird
    assert "bird of prey" in glosser.gloss("Tawny Owl")


def test_a_glossed_anchor_scores_the_mean_of_it_alone_and_with_its_gloss(glosser):
    model = KeywordModel(keywords=["bird"], r0=0.5).fit()
    links = [
        ("http://b.test/", "Tawny Owl", ""),
        ("http://c.test/", "Xqzzyv", ""),
        ("http://d.test/", "Tawny Owl", ""),
    ]
    plain = Judge(model, threshold=0.5, link_score="anchor")
    glossed = Judge(model, threshold=0.5, link_score="anchor", glosser=glosser)
    before = plain(page("birds", links, anchor="Tawny Owl"))
    after = glossed(page("birds", links, anchor="Tawny Owl"))
    assert [link.anchor_relevance for link in before.links] == [0, 0, 0]  # no "bird" in them
    with_gloss = model.relevance([f"Tawny Owl\n{glosser.gloss('Tawny Owl')}"])[0]
    assert with_gloss > 0
    # unknown to WordNet: its own R
    assert [link.anchor_relevance for link in after.links] == [with_gloss / 2, 0, with_gloss / 2]
    assert after.arrival == with_gloss / 2  # the arrival anchor too
    assert after.relevance == before.relevance
    assert after.glossed == 3 and before.glossed == 0  # the arrival and two links
    # Looked up and scored once per anchor text, then kept; WordNet's "no" is kept too.
    assert glossed.glossed_relevance == {"Tawny Owl": with_gloss, "Xqzzyv": None}
    glossed.glossed_relevance["Tawny Owl"] = 0.5  # the next page reads the kept score
    again = glossed(page("birds", links[:1], anchor="Tawny Owl"))
    assert [link.anchor_relevance for link in again.links] == [0.25]


def test_the_setting_picks_auto_required_or_off(tmp_path, monkeypatch, caplog):
    assert anchor_glosser("false") is None and anchor_glosser(False) is None
    assert isinstance(anchor_glosser("auto"), AnchorGlosser)
    with pytest.raises(FocusedError, match="FOCUSED_ANCHOR_GLOSS"):
        anchor_glosser("sometimes")
    monkeypatch.setenv(WORDNET_ENV, str(tmp_path))  # no WordNet there
    with caplog.at_level(logging.WARNING):
        assert anchor_glosser("auto") is None
    assert "apt-get install wordnet-base" in caplog.text
    with pytest.raises(FocusedError, match="WordNet not found"):
        anchor_glosser(True)


def test_kept_glosses_are_the_ones_looked_up_afresh(glosser, monkeypatch):
    """A lookup's gloss is kept for every anchor that shares it ("Music of Thailand" and
    "Music of Laos" look up "music"), and is what glossing the anchor alone gives."""
    anchors = ["Music of Thailand", "Music of Laos", "Krypton", "Xyzzy Plugh", "Tawny Owls"]
    anchors += ["Great Crested Grebe", "crested grebe", "", "a b c d e f g", "Owl (bird)"]
    monkeypatch.setattr("focused.relevance.gloss.MAX_GLOSSES", 4)
    glosser.glosses.clear()
    for anchor in anchors * 2:
        found = glosser.synsets(anchor)[: glosser.senses]
        assert glosser.gloss(anchor) == glosser._gloss(found)
        assert len(glosser.glosses) <= 4 + 3  # full: starts again, then an anchor's lookups
    assert glosser.gloss("Music of Laos") == glosser._gloss(glosser.synsets("music"))


def test_threads_gloss_what_one_thread_glosses(glosser):
    """A refit's thread and the crawl's gloss with the process's one WordNet reader at once:
    each gets the glosses that one thread alone gets (the reader reads its files at offsets,
    with no file position that two threads could move under each other)."""
    folder = find_wordnet()
    anchors = nouns(40)[:2000]
    alone = AnchorGlosser()
    alone.wordnet = WordNetNouns(folder)  # no synset read yet: every one is read from its file
    expected = [alone.gloss(anchor) for anchor in anchors]
    shared = WordNetNouns(folder)
    glossers = [AnchorGlosser() for _ in range(4)]
    for each in glossers:
        each.wordnet = shared
    got: dict[int, str] = {}
    failures: list[BaseException] = []

    def gloss(worker: int) -> None:
        try:
            for i in range(worker, len(anchors), len(glossers)):
                got[i] = glossers[worker].gloss(anchors[i])
        except BaseException as exc:
            failures.append(exc)

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns as often as they can
    try:
        threads = [threading.Thread(target=gloss, args=(w,)) for w in range(len(glossers))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert not failures
    assert [got[i] for i in range(len(anchors))] == expected


def test_a_synset_that_cannot_be_read_is_left_out_of_the_gloss(glosser, tmp_path):
    """A damaged data file: the reader warns as nltk's does and gives None for the synset, and
    the gloss has the senses it could read."""
    folder = find_wordnet()
    for file in folder.iterdir():
        (tmp_path / file.name).symlink_to(file)
    at = glosser.wordnet.offsets("owl")[0]
    data = (folder / "data.noun").read_bytes()
    (tmp_path / "data.noun").unlink()
    (tmp_path / "data.noun").write_bytes(data[:at] + b"x" * 8 + data[at + 8 :])
    damaged = AnchorGlosser()
    damaged.wordnet = WordNetNouns(tmp_path)
    with pytest.warns(UserWarning, match="No WordNet synset found"):
        # Its own definition, and none of its broader terms: the first of them is "owl".
        tawny_owl = glosser.wordnet.synsets("tawny_owl")[0]
        assert damaged.gloss("Tawny Owl") == tawny_owl.definition()
        assert damaged.gloss("owls") == ""
