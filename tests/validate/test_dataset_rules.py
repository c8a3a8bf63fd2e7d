"""Rules across lines and files: counts, duplicate ids, ids and tags against a corpus."""

from __future__ import annotations

from pathlib import Path

from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.validate import validate_datasets
from tests.validate.dataset_builders import fixture, full_dataset, line, write_dataset

CORPUS = Corpus(
    documents=(
        Document(
            id="recipes/shakshuka", title="Shakshuka", text="eggs", tags=("recipes", "breakfast")
        ),
        Document(id="travel/lisbon", title="Lisbon", text="trams", tags=("travel",)),
    ),
    location="notes",
    skipped_empty=("empty-note",),
)


def messages(paths: list[Path], **options: object) -> list[str]:
    report = validate_datasets(paths, **options)  # type: ignore[arg-type]
    return [str(problem) for problem in report.problems]


def test_too_few_fixtures_and_too_few_human_annotated(tmp_path: Path) -> None:
    lines = [line(fixture(f"h-{i}", "hybrid")) for i in range(3)]
    lines += [line(fixture(f"s-{i}", "hybrid", ground_truth_source="synthetic")) for i in range(5)]
    path = write_dataset(tmp_path / "hybrid.jsonl", lines)

    assert messages([path], corpus=None) == [
        f"{path}:1: 8 valid fixtures; at least 20 are required",
        f"{path}:1: 3 human-annotated fixtures; at least 10 are required",
    ]
    assert messages([path], corpus=None, min_fixtures=8, min_human=3) == []


def test_duplicate_query_id_across_files_names_both_locations(tmp_path: Path) -> None:
    semantic = full_dataset(tmp_path / "semantic.jsonl", "semantic")
    keyword = full_dataset(tmp_path / "keyword.jsonl", "keyword")
    keyword.write_text(keyword.read_text().replace("key-007", "sem-012"), encoding="utf-8")

    assert messages([tmp_path], corpus=None) == [
        f"{keyword}:7: duplicate query_id 'sem-012' (first defined at {semantic}:12)"
    ]


def test_expected_ids_must_exist_in_the_corpus(tmp_path: Path) -> None:
    path = write_dataset(
        tmp_path / "semantic.jsonl",
        [
            line(fixture("q1", expected_top_k_ids=["recipes/shakshuka", "recipes/shakshuk"])),
            line(fixture("q2", expected_top_k_ids=["empty-note", "nowhere/at-all"])),
        ],
    )
    assert messages([path], corpus=CORPUS, min_fixtures=0, min_human=0) == [
        f"{path}:1: expected id 'recipes/shakshuk' is not in the corpus (notes); did you mean "
        "'recipes/shakshuka'?",
        f"{path}:2: expected id 'nowhere/at-all' is not in the corpus (notes)",
    ]


def test_filter_tag_on_no_document_is_allowed_only_when_expect_empty(tmp_path: Path) -> None:
    path = write_dataset(
        tmp_path / "hybrid.jsonl",
        [
            line(
                fixture(
                    "t1",
                    "hybrid",
                    expected_top_k_ids=["travel/lisbon"],
                    filters={"tags": ["travel", "nope"]},
                )
            ),
            line(
                fixture(
                    "t2",
                    "hybrid",
                    expected_top_k_ids=[],
                    expect_empty=True,
                    filters={"tags": ["nope"]},
                )
            ),
            line(
                fixture(
                    "t3",
                    "hybrid",
                    expected_top_k_ids=["travel/lisbon"],
                    filters={"tags": ["recipes"]},
                )
            ),
        ],
    )
    assert messages([path], corpus=CORPUS, min_fixtures=0, min_human=0) == [
        f"{path}:1: filter tag 'nope' is on no document in the corpus; "
        "set expect_empty: true if no results is the correct answer",
        f"{path}:3: expected id 'travel/lisbon' carries none of the filter tags 'recipes', "
        "so a filtered search can never return it",
    ]


def test_folder_validates_the_dataset_files_it_holds_and_ignores_others(tmp_path: Path) -> None:
    full_dataset(tmp_path / "semantic.jsonl", "semantic")
    full_dataset(tmp_path / "hybrid.jsonl", "hybrid")
    (tmp_path / "documents.jsonl").write_text("{}\n", encoding="utf-8")

    report = validate_datasets([tmp_path], corpus=None)

    assert report.problems == []
    assert list(report.datasets) == [tmp_path / "semantic.jsonl", tmp_path / "hybrid.jsonl"]
    assert report.ignored == [tmp_path / "documents.jsonl"]
    assert report.fixture_count == 40


def test_a_file_with_another_name_may_mix_types(tmp_path: Path) -> None:
    path = write_dataset(
        tmp_path / "regressions.jsonl",
        [line(fixture("a", "semantic")), line(fixture("b", "keyword"))],
    )
    assert messages([path], corpus=None, min_fixtures=2, min_human=2) == []


def test_keep_fixtures_false_still_counts(tmp_path: Path) -> None:
    path = full_dataset(tmp_path / "keyword.jsonl", "keyword")
    report = validate_datasets([path], corpus=None, keep_fixtures=False)
    assert report.datasets == {path: []}
    assert report.fixture_count == 20
