//! The integration-test binary: drives the real `okf-mcp` binary over stdio (MCP) and through
//! `okf-mcp call`, on fixtures copied from `fixtures/bundles/` and on copies of
//! `../shared/corpus/`. Scenario ids refer to `../shared/spec/scenarios.md`; the map from
//! ids to tests is `tests/COVERAGE.md`.

mod support;

mod aliases;
mod auto_profile;
mod capture;
mod cli;
mod contract_doc;
mod corpus;
mod coverage_doc;
mod demo;
#[cfg(feature = "fault-injection")]
mod durability;
mod framing;
mod golden;
mod guard;
#[cfg(feature = "fault-injection")]
mod honest;
mod host;
mod hygiene;
mod inspector;
mod layers;
mod lockfirst;
mod markdown_oracle;
mod mcp;
mod mcp_use_client;
mod migrate_cli;
mod migration;
mod migration_agents;
mod migration_computations;
#[cfg(feature = "fault-injection")]
mod migration_crash;
#[cfg(feature = "fault-injection")]
mod migration_io;
mod migration_rules;
mod migration_scale;
mod newcomer;
mod papercuts;
mod patch;
mod patch_corpus;
mod paths;
mod phase4;
mod phase4_oracle;
mod phase4_scale;
mod progress;
mod python_client;
mod raw;
mod read_tools;
mod registry;
mod schema;
mod server;
#[cfg(feature = "fault-injection")]
mod store;
#[cfg(feature = "fault-injection")]
mod store_scale;
mod temporal;
#[cfg(feature = "fault-injection")]
mod temporal_crash;
mod terms_oracle;
mod text_content;
mod ts_client;
mod validate;
mod warm;
mod write_concept;
