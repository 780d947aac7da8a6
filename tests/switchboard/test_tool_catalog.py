"""The index find_tools ranks with (SPEC §23): a downstream's listing is indexed once, whoever
searches and however often, and again only when the downstream lists something else; names are
split into words; a query is only ever plain words."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import mcp_types as types

from colibri.storage.sqlite.fts import BLENDED, Document, TextIndex
from colibri.switchboard.routing.catalog import Catalog, id_patterns
from colibri.switchboard.routing.query import MAX_QUERY_WORDS, also_of, ids_of, name_words, words_of


def tool(name: str, description: str, **arguments: str) -> types.Tool:
    properties = {argument: {"type": "string", "description": said} for argument, said in arguments.items()}
    return types.Tool(
        name=name, description=description, input_schema={"type": "object", "properties": properties}
    )


def test_a_listing_is_indexed_once_and_again_only_when_it_changes() -> None:
    office = SimpleNamespace(tools={"send_email": tool("send_email", "Send an email message.")})
    clock = SimpleNamespace(
        tools={"get_current_time": tool("get_current_time", "Current time in a timezone.")}
    )
    downstreams: dict[str, Any] = {"office": office, "clock": clock}
    catalog = Catalog(downstreams, lambda: {})
    first = list(catalog.search(words_of("email the team")))
    built = catalog.index.builds
    for _ in range(50):  # fifty searches, as many sessions might make: nothing is indexed again
        assert list(catalog.search(words_of("email the team"))) == first
    assert catalog.index.builds == built and first == ["office.send_email"]

    office.tools = {**office.tools, "book_flight": tool("book_flight", "Reserve a seat on an airplane.")}
    assert list(catalog.search(words_of("book a flight"))) == ["office.book_flight"]
    assert catalog.index.builds > built
    del downstreams["office"]  # removed by a reload: its tools are no longer found
    assert list(catalog.search(words_of("book a flight email"))) == []


def test_arguments_and_their_descriptions_are_searched() -> None:
    downstreams: dict[str, Any] = {
        "geo": SimpleNamespace(tools={"lookup": tool("lookup", "Look a place up.", postcode="a ZIP code")})
    }
    assert list(Catalog(downstreams, lambda: {}).search(words_of("which zip"))) == ["geo.lookup"]


def test_the_fields_of_arguments_and_the_server_are_searched() -> None:
    fields = {"type": "object", "properties": {"ownerEmail": {"type": "string", "description": "who"}}}
    relate = types.Tool(
        name="relate",
        description="Add links.",
        input_schema={"type": "object", "properties": {"links": {"type": "array", "items": fields}}},
    )
    downstreams: dict[str, Any] = {"graph": SimpleNamespace(tools={"relate": relate})}
    catalog = Catalog(downstreams, lambda: {})
    assert list(catalog.search(words_of("owner email"))) == ["graph.relate"]
    assert list(catalog.search(words_of("graph"))) == ["graph.relate"]  # by its server's name


def test_names_are_split_at_punctuation_and_case() -> None:
    assert name_words("filesystem.read_text-file") == "filesystem read text file"
    assert name_words("getCurrentTime") == "get Current Time"
    assert name_words("parseHTTPResponse") == "parse HTTP Response"


def test_a_query_is_plain_words() -> None:
    assert words_of('NEAR("email" OR boss*) : ^x') == ["near", "email", "boss"]
    assert words_of("what is the") == ["what", "is", "the"]  # all filler: kept, rather than nothing
    assert words_of("") == []
    assert len(words_of(" ".join(f"w{n}" for n in range(500)))) == MAX_QUERY_WORDS


def test_an_expansion_never_outranks_a_literal_match() -> None:
    # "folder" is the lexicon's "directory". list_directory has the expansion in its name, which
    # BM25 weighs most, and a short text; browse has the user's own word, once, in a long one.
    # Counted as if the user had written it, the expansion would come first.
    files = SimpleNamespace(
        tools={
            "list_directory": tool("list_directory", "List a directory."),
            "browse": tool(
                "browse", "Open a folder and show each entry it holds, one per line, with its size and date."
            ),
        }
    )
    downstreams: dict[str, Any] = {"files": files}
    catalog = Catalog(downstreams, lambda: {})
    assert also_of("folder") == [(["folder"], ["directory"])]
    assert list(catalog.search(words_of("folder"), also_of("folder"))) == [
        "files.browse",
        "files.list_directory",
    ]
    # Where nothing has the user's word, what it means is found all the same.
    assert list(catalog.search(words_of("subfolder"), also_of("subfolder"))) == ["files.list_directory"]


def test_a_phrase_is_read_before_its_words() -> None:
    assert also_of("add up 3 and 4") == [(["add", "up"], ["sum", "numbers"])]
    assert [meant for _, meant in also_of("add a ticket")] == [["create"], ["task"]]


def test_an_inflected_word_means_what_its_stem_does() -> None:
    for said, stem in (("folders", "folder"), ("remembered", "remember"), ("removing", "remove")):
        assert [meant for _, meant in also_of(said)] == [meant for _, meant in also_of(stem)] != []
    # A word the lexicon has is itself, not another's plural: "times" is multiply, "time" is not.
    assert [meant for _, meant in also_of("times")] == [["multiply", "numbers"]]
    assert all("multiply" not in meant for _, meant in also_of("time"))


def test_a_blended_search_still_reaches_every_match() -> None:
    # Past the best few hundred it ranks blended, the rest follow: a caller whose policies hide
    # the best still finds what it may call.
    index = TextIndex()
    count = BLENDED + 50
    index.replace("many", [Document(f"many.t{n}", f"t{n}", "", "Open a folder.", "") for n in range(count)])
    found = list(index.search(["folder"], [(["folder"], ["directory"])]))
    assert sorted(found) == sorted(f"many.t{n}" for n in range(count))


def test_a_query_about_a_server_lifts_its_tools() -> None:
    # "forget" says the query is about memory (a tool of it has that name): memory's add comes
    # before the shell's add_alias, which BM25 alone ranks first for "add" (a shorter text).
    downstreams: dict[str, Any] = {
        "memory": SimpleNamespace(
            tools={
                "add": tool("add", "Add a fact to what is kept, one per call."),
                "forget": tool("forget", "Forget a fact."),
            }
        ),
        "shell": SimpleNamespace(tools={"add_alias": tool("add_alias", "Add an alias.")}),
    }
    catalog = Catalog(downstreams, lambda: {})
    assert list(catalog.search(words_of("add"))) == ["shell.add_alias", "memory.add"]
    found = list(catalog.search(words_of("add one I may forget later")))
    assert found == ["memory.forget", "memory.add", "shell.add_alias"]  # only what the words matched


def test_an_id_in_a_tools_own_format_lifts_that_tool() -> None:
    ticket = {"type": "string", "pattern": "^T-[1-9][0-9]*$"}
    get = types.Tool(
        name="get", description="One item.", input_schema={"type": "object", "properties": {"id": ticket}}
    )
    # list_items has "item" in its name, which BM25 weighs most; get takes an id like the query's.
    listing = tool("list_items", "Every item.")
    downstreams: dict[str, Any] = {"board": SimpleNamespace(tools={"get": get, "list_items": listing})}
    catalog = Catalog(downstreams, lambda: {})
    query = "the item T-12, please"
    assert ids_of(query) == ["T-12"] and ids_of("in 2 days, T-3.") == ["2", "T-3"]
    assert list(catalog.search(words_of(query))) == ["board.list_items", "board.get"]
    assert list(catalog.search(words_of(query), (), ids_of(query))) == ["board.get", "board.list_items"]
    # Found by the id alone, where no word matches.
    assert list(catalog.search(words_of("T-7"), (), ["T-7"])) == ["board.get"]
    # A pattern that could backtrack for long is no format to go by.
    for slow in ("^(a+)+$", "^a*a*a*a*b$"):
        assert id_patterns(types.Tool(name="x", input_schema={"properties": {"a": {"pattern": slow}}})) == []


def test_a_fact_told_is_a_relation_or_an_observation() -> None:
    # A graph's tools speak of entities, relations and observations; a user states facts: a verb
    # joining two things is a relation, a trait of one an observation, "no longer" a link deleted.
    graph = {
        "create_entities": tool("create_entities", "Create new entities in the knowledge graph"),
        "create_relations": tool("create_relations", "Create new relations between entities"),
        "add_observations": tool("add_observations", "Add new observations to existing entities"),
        "delete_relations": tool("delete_relations", "Delete relations from the knowledge graph"),
    }
    downstreams: dict[str, Any] = {"graph": SimpleNamespace(tools=graph)}
    catalog = Catalog(downstreams, lambda: {})
    for query, wanted in (
        ("remember that Priya manages billing", "graph.create_relations"),
        ("note that Tom works on project Apollo", "graph.create_relations"),
        ("keep in mind Dana prefers tabs", "graph.add_observations"),
        ("Priya no longer manages billing, unlink them", "graph.delete_relations"),
    ):
        assert next(catalog.search(words_of(query), also_of(query))) == wanted, query


def test_a_files_name_or_a_path_says_the_query_is_about_files() -> None:
    downstreams: dict[str, Any] = {
        "files": SimpleNamespace(tools={"read_text_file": tool("read_text_file", "Read a file as text.")}),
        "board": SimpleNamespace(tools={"task_list": tool("task_list", "List the tasks.")}),
    }
    catalog = Catalog(downstreams, lambda: {})
    for query in ("what does README.md say?", "open src/app/.env.example", "cat ~/.bashrc"):
        assert list(catalog.search(words_of(query), also_of(query))) == ["files.read_text_file"], query
    assert also_of("is shared/output there") == [([], ["path"])]
    # Numbers, abbreviations, the web's names and URLs are no file's.
    for query in (
        "add 17.5 and 4.25",
        "at 3 p.m. e.g. today",
        "fetch example.com",
        "get https://a.org/b.html",
    ):
        assert all("file" not in meant for _, meant in also_of(query)), query


def test_the_ways_people_ask_about_files_find_each_operation() -> None:
    files = {
        "list_directory": tool("list_directory", "Get a listing of the files in a directory."),
        "list_directory_with_sizes": tool("list_directory_with_sizes", "A listing with sizes."),
        "move_file": tool("move_file", "Move or rename a file."),
        "get_file_info": tool("get_file_info", "Metadata about a file: size, modified time."),
        "read_text_file": tool("read_text_file", "Read a file as text."),
        "list_allowed_directories": tool("list_allowed_directories", "The directories allowed."),
    }
    downstreams: dict[str, Any] = {"fs": SimpleNamespace(tools=files)}
    catalog = Catalog(downstreams, lambda: {})
    for query, wanted in (
        ("which files are sitting in downloads", "fs.list_directory"),
        ("what's eating up the disk space here", "fs.list_directory_with_sizes"),
        ("shift the old logs over to archive", "fs.move_file"),
        ("the creation date of the report", "fs.get_file_info"),
        ("what does the readme say", "fs.read_text_file"),
        ("where can you reach at all", "fs.list_allowed_directories"),
    ):
        assert next(catalog.search(words_of(query), also_of(query))) == wanted, query


def test_two_quantities_or_more_say_the_query_works_on_numbers() -> None:
    downstreams: dict[str, Any] = {
        "demo": SimpleNamespace(tools={"get_sum": tool("get_sum", "Returns the sum of two numbers.")}),
        "board": SimpleNamespace(tools={"task_add": tool("task_add", "Add a task to the board.")}),
    }
    catalog = Catalog(downstreams, lambda: {})
    query = "add 17.5 and 4.25 for me"
    # The sum is found, no word of the query being its; the literal "add" stays first.
    assert list(catalog.search(words_of(query), also_of(query))) == ["board.task_add", "demo.get_sum"]
    # One number, an id or a date is no quantity to work on.
    for query in ("add task 12", "add T-12 and T-13", "add one on 2024-05-01 at 3"):
        assert all("numbers" not in meant for _, meant in also_of(query)), query


def test_everyday_words_for_checking_pretending_concluding_and_pointing() -> None:
    tools = {
        "verify_chain": tool("verify_chain", "Verify the hash chain."),
        "simulate_query": tool("simulate_query", "A simulated research query."),
        "thought_record": tool("thought_record", "Record a thought."),
        "get_links": tool("get_links", "Returns resource links."),
    }
    downstreams: dict[str, Any] = {"demo": SimpleNamespace(tools=tools)}
    catalog = Catalog(downstreams, lambda: {})
    for query, wanted in (
        ("make sure it all holds up", "demo.verify_chain"),
        ("pretend to ask about coffee", "demo.simulate_query"),
        ("write down my conclusions", "demo.thought_record"),
        ("a handful of pointers", "demo.get_links"),
    ):
        assert next(catalog.search(words_of(query), also_of(query))) == wanted, query


def test_a_variables_name_says_the_query_is_about_the_environment() -> None:
    tools = {
        "get_env": tool("get_env", "Returns all environment variables."),
        "server_options": tool("server_options", "The options a server was started with."),
    }
    downstreams: dict[str, Any] = {"demo": SimpleNamespace(tools=tools)}
    catalog = Catalog(downstreams, lambda: {})
    query = "is $NODE_OPTIONS set for the server"
    # Found though no word of the query is its; the literal match stays first.
    assert list(catalog.search(words_of(query), also_of(query)))[:2] == [
        "demo.server_options",
        "demo.get_env",
    ]
    # An acronym is no variable.
    assert all("environment" not in meant for _, meant in also_of("the JSON of a URL"))


def test_a_city_of_the_time_zone_database_says_the_query_asks_the_time_there() -> None:
    tools = {
        "get_current_time": tool("get_current_time", "Get the current time in a timezone."),
        "call_contact": tool("call_contact", "Phone a contact."),
    }
    downstreams: dict[str, Any] = {"office": SimpleNamespace(tools=tools)}
    catalog = Catalog(downstreams, lambda: {})
    for query in ("can I still phone the Sydney office?", "is the team in Los Angeles online yet"):
        assert "office.get_current_time" in list(catalog.search(words_of(query), also_of(query))), query
    # A place in a fact told is part of the fact; an everyday word that names a zone is no place.
    for query in ("remember that Alice lives in Berlin", "wake me when the build is done"):
        assert all("time" not in meant for _, meant in also_of(query)), query


def test_goals_in_the_users_own_terms_find_the_tool_that_is_their_means() -> None:
    tools = {
        "task_list": tool("task_list", "List the tasks on the board."),
        "task_next_actions": tool("task_next_actions", "Suggest the next actions."),
        "session_start": tool("session_start", "Start an audit session."),
        "get_current_time": tool("get_current_time", "Get the current time in a timezone."),
        "edit_file": tool("edit_file", "Make line-based edits to a text file."),
        "write_file": tool("write_file", "Create or overwrite a file."),
    }
    downstreams: dict[str, Any] = {"desk": SimpleNamespace(tools=tools)}
    catalog = Catalog(downstreams, lambda: {})
    for query, wanted in (
        ("what is everybody busy with?", "desk.task_list"),
        ("new here: where do I start?", "desk.task_next_actions"),
        ("kick off a tracked work period for the review", "desk.session_start"),
        ("is it too late to phone Mumbai?", "desk.get_current_time"),
        ("swap requests for httpx in client.py", "desk.edit_file"),
    ):
        assert list(catalog.search(words_of(query), also_of(query)))[:1] == [wanted], query


def test_two_names_in_quotes_ask_for_things_by_their_names() -> None:
    tools = {
        "open_nodes": tool("open_nodes", "Open nodes of the graph by their names."),
        "add_entries": tool("add_entries", "Add entries to the graph."),
    }
    downstreams: dict[str, Any] = {"graph": SimpleNamespace(tools=tools)}
    catalog = Catalog(downstreams, lambda: {})
    query = "bring back 'billing-service' and 'auth-service'"
    assert list(catalog.search(words_of(query), also_of(query)))[:1] == ["graph.open_nodes"]
    # One quoted text is no name asked for; an apostrophe is no quote.
    for query in ("fix the typo 'recieve' in the notes", "what's in Bob's notes"):
        assert all("names" not in meant for _, meant in also_of(query)), query


def test_what_is_mentioned_gone_past_or_behind_ones_back_finds_its_tool() -> None:
    tools = {
        "search_nodes": tool("search_nodes", "Search for nodes based on a query."),
        "read_graph": tool("read_graph", "Read the entire graph."),
        "delete_entities": tool("delete_entities", "Delete entities from the graph."),
        "trail_list": tool("trail_list", "Read back the decision trail."),
        "verify_chain": tool("verify_chain", "Verify the hash chain is intact."),
        "directory_tree": tool("directory_tree", "Get a recursive tree of files."),
        "file_info": tool("file_info", "Get information about a file: when it was modified."),
        "server_health": tool("server_health", "Report the health status."),
        "skill_list": tool("skill_list", "List the installed skills."),
        "task_create": tool("task_create", "Create a task."),
    }
    downstreams: dict[str, Any] = {"desk": SimpleNamespace(tools=tools)}
    catalog = Catalog(downstreams, lambda: {})
    for query, wanted in (
        ("anything mentioning Kubernetes?", "desk.search_nodes"),
        ("give me the big picture", "desk.read_graph"),
        ("Carol quit, we won't need her", "desk.delete_entities"),
        ("in hindsight, why did we pick Postgres?", "desk.trail_list"),
        ("were old rows doctored behind our backs?", "desk.verify_chain"),
        ("an outline of the repo", "desk.directory_tree"),
        ("how old is that export?", "desk.file_info"),
        ("are the gateway's metrics fine?", "desk.server_health"),
        ("is there a runbook for rotating keys?", "desk.skill_list"),
        ("somebody should take care of the flaky test", "desk.task_create"),
    ):
        assert list(catalog.search(words_of(query), also_of(query)))[:1] == [wanted], query


def test_a_contractions_letter_is_no_word_said() -> None:
    # "what's in" says read; its "s" is no word of the query (a document's lone "s", from "a
    # server's", is no literal match of it), so the expansion is free, not scaled below such a match.
    assert also_of("what's in the ledger") == [([], ["read"])]
    assert also_of("show me the ledger") == [(["show"], ["read", "get", "list"])]


def test_a_role_between_people_and_ways_to_say_keep_this_fact() -> None:
    tools = {
        "create_relations": tool("create_relations", "Create relations between entities."),
        "memory_store": tool("memory_store", "Store something in memory."),
    }
    catalog = Catalog({"graph": SimpleNamespace(tools=tools)}, lambda: {})
    for query, wanted in (
        ("Priya is Tom's mentor", "graph.create_relations"),
        ("fyi, the standup moved to Tuesdays", "graph.memory_store"),
    ):
        assert list(catalog.search(words_of(query), also_of(query)))[:1] == [wanted], query


def test_what_a_named_one_is_and_news_about_one_already_known() -> None:
    tools = {
        "create_entities": tool("create_entities", "Create entities, each with a name and a type."),
        "add_observations": tool("add_observations", "Add observations to existing entities."),
        "create_task": tool("create_task", "Create a task for the team."),
    }
    catalog = Catalog({"graph": SimpleNamespace(tools=tools)}, lambda: {})
    for query, wanted in (
        ("Marta is a designer who draws the icons", "graph.create_entities"),
        ("Marta plays cello these days", "graph.add_observations"),
    ):
        assert list(catalog.search(words_of(query), also_of(query)))[:1] == [wanted], query
