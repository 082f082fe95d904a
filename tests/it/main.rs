//! The integration-test binary: drives the real `okf-mcp` binary over stdio (MCP) and through
//! `okf-mcp call`, on fixtures copied from `fixtures/bundles/` and on copies of
//! `../shared/corpus/`. Scenario ids refer to `../shared/spec/scenarios.md`; the map from
//! ids to tests is `tests/COVERAGE.md`.

mod util;

mod aliases;
mod capture;
mod cli;
mod contract_doc;
mod corpus;
#[cfg(feature = "fault-injection")]
mod durability;
mod framing;
mod mcp;
mod patch;
mod patch_corpus;
#[cfg(feature = "fault-injection")]
mod paths;
mod python_client;
mod raw;
mod read_tools;
mod schema;
mod server;
mod store;
mod validate;
