"""Configuration: one resolver, explicit > env > ./.loadstone > $LOADSTONE_HOME > default.

conftest gives every test its own working directory and ``LOADSTONE_HOME``; these tests
write real TOML files there and set real environment variables.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadstone import config
from loadstone.exceptions import ConfigFileError, LoadstoneError


@pytest.fixture(autouse=True)
def _no_spark_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("SPARK__"):
            monkeypatch.delenv(key)


def project(text: str, file: str = "config.toml") -> Path:
    folder = Path.cwd() / ".loadstone"
    folder.mkdir(exist_ok=True)
    path = folder / file
    path.write_text(text, encoding="utf-8")
    return path


def home(text: str, file: str = "config.toml") -> Path:
    folder = Path(os.environ["LOADSTONE_HOME"])
    path = folder / file
    path.write_text(text, encoding="utf-8")
    return path


SOURCE_NAMING = '[sources.github.schema]\nnaming = "{}"\n'
SCHEMA_NAMING = '[schema]\nnaming = "{}"\n'


# --- resolve_naming: each level beats the next -----------------------------------------------


def test_nothing_configured_gives_snake_case() -> None:
    assert config.resolve_naming("github") == "snake_case"


def test_destination_preference_beats_the_snake_case_default() -> None:
    assert config.resolve_naming("github", destination_preferred="sql_ci_v1") == "sql_ci_v1"


def test_home_schema_naming_beats_destination_preference() -> None:
    home(SCHEMA_NAMING.format("direct"))
    assert config.resolve_naming("github", destination_preferred="sql_ci_v1") == "direct"


def test_home_source_naming_beats_home_schema_naming() -> None:
    home(SOURCE_NAMING.format("sql_cs_v1") + SCHEMA_NAMING.format("direct"))
    assert config.resolve_naming("github") == "sql_cs_v1"


def test_home_source_naming_applies_only_to_its_source() -> None:
    home(SOURCE_NAMING.format("sql_cs_v1") + SCHEMA_NAMING.format("direct"))
    assert config.resolve_naming("zendesk") == "direct"
    assert config.resolve_naming() == "direct"


def test_project_schema_naming_beats_home_source_naming() -> None:
    home(SOURCE_NAMING.format("sql_cs_v1"))
    project(SCHEMA_NAMING.format("duck_case"))
    assert config.resolve_naming("github") == "duck_case"


def test_project_source_naming_beats_project_schema_naming() -> None:
    project(SOURCE_NAMING.format("sql_cs_v1") + SCHEMA_NAMING.format("duck_case"))
    assert config.resolve_naming("github") == "sql_cs_v1"


def test_env_schema_naming_beats_project_source_naming(monkeypatch: pytest.MonkeyPatch) -> None:
    project(SOURCE_NAMING.format("sql_cs_v1"))
    monkeypatch.setenv("SCHEMA__NAMING", "s3_tables")
    assert config.resolve_naming("github") == "s3_tables"


def test_env_source_naming_beats_env_schema_naming(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMA__NAMING", "s3_tables")
    monkeypatch.setenv("SOURCES__GITHUB__SCHEMA__NAMING", "sql_ci_v1")
    assert config.resolve_naming("github") == "sql_ci_v1"


def test_explicit_naming_beats_env_source_naming(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCES__GITHUB__SCHEMA__NAMING", "sql_ci_v1")
    assert config.resolve_naming("github", explicit="direct") == "direct"


def test_secrets_toml_beats_config_toml_in_the_same_folder() -> None:
    project(SCHEMA_NAMING.format("direct"))
    project(SCHEMA_NAMING.format("sql_ci_v1"), file="secrets.toml")
    assert config.resolve_naming() == "sql_ci_v1"


def test_home_secrets_toml_is_read() -> None:
    home(SCHEMA_NAMING.format("duck_case"), file="secrets.toml")
    assert config.resolve_naming() == "duck_case"


def test_loadstone_home_defaults_to_dot_loadstone_in_the_user_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    user = tmp_path / "user"
    (user / ".loadstone").mkdir(parents=True)
    (user / ".loadstone" / "config.toml").write_text(SCHEMA_NAMING.format("sql_cs_v1"))
    monkeypatch.delenv("LOADSTONE_HOME")
    monkeypatch.setenv("HOME", str(user))
    assert config.home_dir() == user / ".loadstone"
    assert config.resolve_naming() == "sql_cs_v1"


def test_naming_may_be_a_module_path() -> None:
    project(SCHEMA_NAMING.format("my_package.sql_cs_latin2"))
    assert config.resolve_naming() == "my_package.sql_cs_latin2"


# --- the generic resolver --------------------------------------------------------------------


def test_get_reads_a_dotted_key_path() -> None:
    project('[normalize]\non_bad_record = "skip"\n')
    assert config.get("normalize.on_bad_record") == "skip"


def test_get_returns_the_default_when_nothing_is_configured() -> None:
    assert config.get("normalize.on_bad_record", "fail") == "fail"


def test_get_tries_candidate_paths_in_order() -> None:
    project("[a]\nx = 1\n[b]\nx = 2\n")
    assert config.get(["a.x", "b.x"]) == 1
    assert config.get(["missing.x", "b.x"]) == 2


def test_get_prefers_an_explicit_value() -> None:
    project("[a]\nx = 1\n")
    assert config.get("a.x", explicit=5) == 5


def test_a_general_key_in_the_environment_beats_a_specific_key_in_a_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project('[a.b]\nx = "file"\n')
    monkeypatch.setenv("A__X", "env")
    assert config.resolve(("a", "b", "x"), ("a", "x")) == "env"


def test_a_false_value_is_found_not_skipped() -> None:
    project("[load]\ntruncate = false\n")
    assert config.get("load.truncate", default=True) is False


def test_a_quoted_dotted_key_matches_its_key_path() -> None:
    project('[destination]\n"duckdb.credentials" = "x.duckdb"\n')
    assert config.get("destination.duckdb.credentials") == "x.duckdb"


def test_segments_let_a_source_name_contain_a_dot(monkeypatch: pytest.MonkeyPatch) -> None:
    project('[sources."my.src".schema]\nnaming = "direct"\n')
    assert config.resolve_naming("my.src") == "direct"


def test_an_edited_file_is_read_again() -> None:
    path = project(SCHEMA_NAMING.format("direct"))
    assert config.resolve_naming() == "direct"
    path.write_text(SCHEMA_NAMING.format("sql_ci_v1_long"))
    assert config.resolve_naming() == "sql_ci_v1_long"


# --- environment values ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("true", True),
        ("false", False),
        ("42", 42),
        ("1.5", 1.5),
        ("[1, 2]", [1, 2]),
        ('"quoted"', "quoted"),
        ("sql_ci_v1", "sql_ci_v1"),
        ("local[2]", "local[2]"),
        ("2024-01-01", "2024-01-01"),
        ("", ""),
    ],
)
def test_env_values_are_toml_literals_when_they_are_one(raw: str, value: object) -> None:
    assert config.parse_env_value(raw) == value


def test_env_value_types_reach_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMALIZE__WORKERS", "4")
    assert config.resolve("normalize.workers") == 4


@given(st.integers())
def test_integers_in_env_values_read_back_as_integers(number: int) -> None:
    assert config.parse_env_value(str(number)) == number


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")))
def test_env_values_never_fail_to_parse(raw: str) -> None:
    config.parse_env_value(raw)


# --- bad files -------------------------------------------------------------------------------


def test_bad_toml_names_the_file_and_the_line() -> None:
    path = project('[schema]\nnaming = "direct"\nbroken = = 1\n')
    with pytest.raises(ConfigFileError) as caught:
        config.resolve_naming()
    assert caught.value.path == path
    assert caught.value.line == 3
    assert str(path) in str(caught.value)
    assert "line 3" in str(caught.value)


def test_bad_toml_at_the_end_of_the_file_names_the_last_line() -> None:
    path = home("[schema]\nnaming = [1,\n")
    with pytest.raises(ConfigFileError) as caught:
        config.get("schema.naming")
    assert caught.value.path == path
    assert caught.value.line == 2


def test_config_file_error_is_a_loadstone_error() -> None:
    assert issubclass(ConfigFileError, LoadstoneError)


# --- spark options ---------------------------------------------------------------------------


def test_spark_options_are_empty_when_nothing_is_configured() -> None:
    assert config.spark_options() == {}


def test_spark_section_keys_become_spark_options() -> None:
    project('[spark]\nmaster = "local[2]"\n')
    assert config.spark_options() == {"spark.master": "local[2]"}


def test_spark_dotted_and_nested_keys_name_the_full_option() -> None:
    project(
        "[spark]\n"
        '"spark.sql.shuffle.partitions" = 4\n'
        "executor.memory = '2g'\n"
        "[spark.driver]\nmemory = '1g'\n"
    )
    assert config.spark_options() == {
        "spark.sql.shuffle.partitions": "4",
        "spark.executor.memory": "2g",
        "spark.driver.memory": "1g",
    }


def test_spark_booleans_are_lower_case_text() -> None:
    project("[spark.ui]\nenabled = true\n")
    assert config.spark_options() == {"spark.ui.enabled": "true"}


def test_spark_env_variables_become_spark_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK__MASTER", "local[2]")
    monkeypatch.setenv("SPARK__SQL__SHUFFLE__PARTITIONS", "3")
    assert config.spark_options() == {
        "spark.master": "local[2]",
        "spark.sql.shuffle.partitions": "3",
    }


def test_spark_env_restores_camel_case_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK__SQL__SESSION__TIMEZONE", "UTC")
    monkeypatch.setenv("SPARK__SQL__FILES__maxRecordsPerFile", "10")
    monkeypatch.setenv("SPARK__TASK__MAXFAILURES", "2")  # spark.task.maxfailures: ignored
    monkeypatch.setenv("SPARK__DRIVER__BINDADDRESS", "127.0.0.1")
    assert config.spark_options() == {
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.files.maxRecordsPerFile": "10",
        "spark.task.maxFailures": "2",
        "spark.driver.bindAddress": "127.0.0.1",
    }


def test_spark_env_beats_project_beats_home(monkeypatch: pytest.MonkeyPatch) -> None:
    home('[spark]\nmaster = "home"\n"app.name" = "home"\ndriver.memory = "home"\n')
    project('[spark]\nmaster = "project"\n"app.name" = "project"\n')
    monkeypatch.setenv("SPARK__MASTER", "env")
    assert config.spark_options() == {
        "spark.master": "env",
        "spark.app.name": "project",
        "spark.driver.memory": "home",
    }


def test_spark_session_options_come_from_config() -> None:
    from loadstone.spark_session import configured_options

    project('[spark]\nmaster = "local[2]"\n')
    assert configured_options()["spark.master"] == "local[2]"


def test_a_local_driver_jvm_skips_the_optimizing_jit() -> None:
    from loadstone.spark_session import configured_options

    options = configured_options()["spark.driver.extraJavaOptions"].split()
    assert options[-1] == "-XX:TieredStopAtLevel=1"
    assert "-Duser.timezone=UTC" in options


def test_a_cluster_driver_keeps_the_stock_jvm_options() -> None:
    from loadstone.spark_session import configured_options

    project('[spark]\nmaster = "spark://head:7077"\n')
    options = configured_options()["spark.driver.extraJavaOptions"]
    assert "TieredStopAtLevel" not in options
    assert "-Duser.timezone=UTC" in options.split()


def test_spark_logs_errors_only_through_the_shipped_log_configuration() -> None:
    from loadstone.spark_session import LOG_CONFIG, configured_options

    options = configured_options()["spark.driver.extraJavaOptions"].split()
    assert f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}" in options
    assert "rootLogger.level = error" in LOG_CONFIG.read_text(encoding="utf-8")


def test_configured_driver_java_options_replace_the_defaults() -> None:
    from loadstone.spark_session import configured_options

    project('[spark]\n"driver.extraJavaOptions" = "-Xss4m"\n')
    assert configured_options()["spark.driver.extraJavaOptions"] == "-Xss4m"


def test_surrounding_spaces_in_a_naming_value_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMA__NAMING", " sql_ci_v1 ")
    assert config.resolve_naming() == "sql_ci_v1"


def test_locate_naming_says_which_environment_variable_set_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOURCES__GITHUB__SCHEMA__NAMING", "direct")
    found = config.locate_naming("github")
    assert (found.value, found.origin) == (
        "direct",
        "environment variable SOURCES__GITHUB__SCHEMA__NAMING",
    )


def test_locate_naming_says_which_file_set_it() -> None:
    path = project(SCHEMA_NAMING.format("direct"))
    assert config.locate_naming().origin == f"schema.naming in {path}"


def test_locate_naming_says_when_the_destination_chose() -> None:
    found = config.locate_naming(destination_preferred="sql_ci_v1")
    assert found.value == "sql_ci_v1"
    assert "destination" in found.origin
