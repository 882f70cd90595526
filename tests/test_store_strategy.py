"""The strategies' shared state in Redis (focused/store/strategy.py) and the online link
model's log (focused/store/learning.py), method by method, on a real Redis: what each writes
is where the keys say, and what it reads back is what was written."""

from __future__ import annotations

import pytest

from focused.store import keys
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import Link
from focused.store.frontier.queue import RedisFrontier
from focused.store.learning import LinkLog
from focused.store.strategy import GeneticStore, HMMCounts, HMMStore, InfoSpidersStore


@pytest.fixture
def store(redis_client, crawl_name) -> CrawlStore:
    return CrawlStore(redis_client, crawl_name, retries=0)


def test_hmm_log_page_appends_keeps_the_last_and_counts(store):
    hmm = HMMStore(store, keep=2)
    assert hmm.log_page(b"one", 1, None).logged == 1
    hmm.log_page(b"two", 2, None)
    counts = hmm.log_page(b"three", 3, b"\x01" * 16)  # with its alpha
    assert (counts.version, counts.fitted, counts.logged) == (0, 0, 3)
    assert hmm.training_log() == ([b"two", b"three"], 3, 0)  # the last two kept
    assert hmm.alpha(3) == b"\x01" * 16
    assert hmm.alpha(2) is None
    assert hmm.log_page(None, 4, None).logged == 3  # no record: only read


def test_hmm_model_is_stored_under_a_new_version_with_its_alphas(store):
    hmm = HMMStore(store, keep=10)
    assert hmm.model() is None
    fields = {"meta": b'{"params": {}}', "transmat": b"\x00\x01\xff"}
    with store.held_lock(keys.HMM_LOCK, 5) as lease:
        assert lease is not None
        assert hmm.store_model(fields, 7, lease) == 1
        assert hmm.model() == ({**fields, "version": b"1", "fitted": b"7"}, 1)
        assert hmm.store_model(fields, 9, lease) == 2
        assert hmm.log_page(None, 0, None) == HMMCounts(version=2, fitted=9, logged=0)
        hmm.store_alphas([(5, b"a" * 16), (5 + keys.HMM_ALPHA_BUCKETS, b"b" * 16)], lease)
    assert (hmm.alpha(5), hmm.alpha(5 + keys.HMM_ALPHA_BUCKETS)) == (b"a" * 16, b"b" * 16)
    assert hmm.for_thread().alpha(5) == b"a" * 16


def test_hmm_fitter_takes_the_crawls_hmm_lock(store):
    hmm = HMMStore(store, keep=10)
    job = hmm.fitter(lambda lease: store._client.get(lease.key) == lease.token, lock_s=5)
    assert job.run()  # the job ran holding the lock
    store._client.set(store.key(keys.HMM_LOCK), "another process")
    assert job.run() is None


def test_genetic_log_reads_back_from_any_byte_on(store):
    genetic = GeneticStore(store)
    per_bucket = genetic.bucket_records
    for i in range(per_bucket + 2):
        assert genetic.log_page(bytes([i % 256]) * 3) == (i + 1, 0)
    whole = genetic.edge_log(0, 0)
    assert [len(data) for data in whole] == [3 * per_bucket, 6]
    assert genetic.edge_log(0, 3 * per_bucket - 3) == [whole[0][-3:], whole[1]]
    assert genetic.edge_log(1, 3) == [whole[1][3:]]


def test_genetic_generations_are_recorded_and_counted(store):
    genetic = GeneticStore(store)
    genetic.log_page(b"x")
    with store.held_lock(keys.GENETIC_LOCK, 5) as lease:
        assert lease is not None
        genetic.record_generation({"last": 1, "generations": 1, "raised": 4, "seconds": 0.5}, lease)
    counts = genetic.counts()
    assert (counts.pages, counts.last, counts.generations) == (1, 1, 1)
    assert store._client.hget(store.key(keys.GENETIC), "raised") == "4"
    assert genetic.log_page(b"y") == (2, 1)  # pages at the last generation, read back
    job = genetic.generation_job(lambda lease: "ran", lock_s=5)
    assert job.run() == "ran"


def test_infospiders_agents_are_created_once_credited_and_recorded(store):
    agents = InfoSpidersStore(store, buckets=16)
    assert agents.create_agents(1.0, [[0.0, 1.0], [2.0, 3.0]]) == 2
    assert agents.create_agents(1.0, [[9.0]]) == 0  # some live: none made
    assert agents.energies() == {"1": 1.0, "2": 1.0}
    assert agents.weights(["1", "2", "3"]) == [[0.0, 1.0], [2.0, 3.0], None]
    agents.add_to_weights("1", [(1, 0.5)])
    agents.add_to_all_weights({"1": [(0, -1.0)], "2": [], "9": [(0, 1.0)]})  # 9: dead
    assert agents.weights(["1", "2"]) == [[-1.0, 1.5], [2.0, 3.0]]
    agents.record_queued("2", [(40, b"\x00\x10\x20"), (41, b"\x01")])
    agents.record_queued("1", [(40, b"\xff")])  # the first agent keeps the URL
    credit = agents.credit_page(
        40, reward=0.5, cost=0.1, reproduce=5.0, max_agents=4, energy=1.0, pick=0
    )
    assert (credit.agent, credit.features, credit.owner) == ("2", b"\x00\x10\x20", "2")
    assert not credit.adopted and credit.event == "" and credit.alive == 2
    assert agents.energies()["2"] == pytest.approx(1.4)
    bucket, field = agents.record_at(40)
    assert store._client.hget(store.key(keys.QUEUED_BY, bucket), field) == "-"  # fetched
    adopted = agents.credit_page(
        77, reward=0.0, cost=0.1, reproduce=5.0, max_agents=4, energy=1.0, pick=1
    )
    assert adopted.adopted and adopted.agent == "2" and adopted.features == b""


def test_link_log_appends_and_reads_from_an_entry_on(store):
    log = LinkLog(store)
    assert log.append_and_read(["a", "b"], 0) == ["a", "b"]
    assert log.append_and_read(["c"], 1) == ["b", "c"]
    assert log.append_and_read([], 2) == ["c"]
    assert store._client.lrange(store.key(keys.LINK_LOG), 0, -1) == ["a", "b", "c"]


def test_host_queues_reads_many_hosts_at_once(redis_client, crawl_name):
    frontier = RedisFrontier.for_crawl(redis_client, crawl_name, host_delay=0.0)
    frontier.push_many(
        [
            Link("http://a.test/1", 0.9, 0),
            Link("http://a.test/2", 0.5, 0),
            Link("http://b.test/", 1),
        ]
    )
    a, b, none = frontier.host_queues(["http://a.test", "http://b.test", "http://c.test"])
    assert [url for *_, url in a] == ["http://a.test/1", "http://a.test/2"]
    assert a == frontier.host_queue("http://a.test") and b == frontier.host_queue("http://b.test")
    assert none == []
    assert frontier.host_queues([]) == []
