"""`solver.plan` for several GPU types while other calls keep the shared pool of threads busy: the calling thread
solves the GPU types no pool thread has started, so a call never waits behind another's solves (its `deadline_s`
holds in a busy service)."""

from __future__ import annotations

import threading

import solver
import solver.model
import solver.solve

POOL_THREADS = 8
"""The threads of `solver.solve._workers`' pool, each of which the test keeps busy."""


def test_plan_answers_every_gpu_type_while_the_pool_is_busy() -> None:
    asked = {"model": "4B", "gpu": ["a100", "h100", "h20"], "max_model_len": 8192, "budget_gpus": 2}
    release, started = threading.Event(), threading.Semaphore(0)

    def busy() -> None:  # another call's long solve, holding a pool thread until released (or 30 s have passed)
        started.release()
        release.wait(timeout=30)

    blockers = [solver.solve._workers().submit(busy) for _ in range(POOL_THREADS)]
    try:
        for _ in range(POOL_THREADS):
            assert started.acquire(timeout=10)
        answers = solver.plan(**asked)  # type: ignore[arg-type]
        answered_while_busy = not any(blocker.done() for blocker in blockers)
    finally:
        release.set()
        for blocker in blockers:
            blocker.result()
    assert answered_while_busy
    assert [(a.gpu, a.plans[0].gpus, a.plans[0].setting.label, a.plans[0].evidence) for a in answers] == [
        ("A100-80GB", 2, "vanilla", "documented"),
        ("H100-80GB", 2, "Env", "estimated"),
        ("H20-96GB", 2, "vanilla", "documented"),
    ]
    assert answers == solver.plan(**asked)  # type: ignore[arg-type]


def test_prepared_data_is_cached_per_catalogue_object_the_last_128() -> None:
    # docs/api.md's "In a service": a catalogue reused hits the cache; an equal one made anew is prepared anew.
    def own_catalog() -> solver.Catalog:
        return solver.load_catalog().with_gpu_types([solver.described_gpu_type("Service-24GB", memory_mib=24576)])

    asked = {"gpu": "Service-24GB", "max_model_len": 8192, "budget_gpus": 2}
    reused = own_catalog()
    solver.plan("1.7B", catalog=reused, **asked)  # type: ignore[arg-type]
    before = solver.model._prepared_inputs.cache_info()
    solver.plan("1.7B", catalog=reused, **asked)  # type: ignore[arg-type]
    after_reused = solver.model._prepared_inputs.cache_info()
    solver.plan("1.7B", catalog=own_catalog(), **asked)  # type: ignore[arg-type]
    after_new = solver.model._prepared_inputs.cache_info()
    assert (after_reused.hits > before.hits, after_reused.misses - before.misses) == (True, 0)
    assert after_new.misses > after_reused.misses
    assert after_new.maxsize == 128
