//! The store test suite: one body per behaviour, run against SQLite (a temp
//! file) and PostgreSQL (a fresh database on `AGENTS_TEST_POSTGRES_URL`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "store/fixtures.rs"]
mod fixtures;
#[path = "store/harness.rs"]
mod harness;
#[path = "store/specific.rs"]
mod specific;
#[path = "store/suite.rs"]
mod suite;

/// Instantiates every listed suite function once per backend.
macro_rules! suite {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    crate::harness::sqlite(crate::suite::$test).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    crate::harness::postgres(concat!("postgres::", stringify!($test)), crate::suite::$test).await;
                }
            )*
        }
    };
}

suite!(
    import_is_all_or_nothing,
    write_skills_writes_its_meta_in_the_same_transaction,
    crud,
    duplicate_add_is_rejected_and_writes_nothing,
    remove_refuses_an_included_skill_unless_forced,
    duplicate_within_one_batch,
    not_found,
    remove_cascades_to_items,
    every_item_kind_round_trips_in_order,
    list_filters_by_namespace_and_sorts_by_name,
    failed_batches_leave_the_database_unchanged,
    optimistic_update_detects_conflicts,
    schema_too_new_is_refused_untouched,
    reopening_keeps_data_and_schema,
    concurrent_first_opens_all_succeed,
    tools_put_get_list_remove,
    replace_tool_group_swaps_one_group,
    replace_tool_group_is_atomic_for_readers,
    replace_tool_group_writes_its_meta_in_the_same_transaction,
    replace_keeping_previous_keeps_one_generation_per_group,
    meta_values,
    load_closure_follows_includes,
    load_closure_of_a_deep_chain,
    status_counts_rows,
    change_stamp_moves_on_every_kind_of_write,
    undecodable_rows_are_reported_as_corrupt,
    names_read_back_are_checked_as_when_written,
    bulk_add_ten_thousand_skills,
    sixteen_concurrent_writers_lose_nothing,
    racing_adds_exactly_one_wins,
    update_racing_remove_applies_or_reports_not_found,
    racing_optimistic_updates_one_wins,
);
