//! `http_get` refuses what it may not fetch before it connects. (Fetching,
//! redirects and bounds are tested in the crate, against a local server.)

use agents_tools::Rule;
use serde_json::json;

use crate::{Tree, call, refused};

#[tokio::test]
async fn loopback_link_local_and_private_addresses_are_refused_by_default() {
    let tree = Tree::new();
    let executor = tree.executor();
    for url in [
        "http://127.0.0.1:9/",
        "http://[::1]:9/",
        "http://[::ffff:127.0.0.1]:9/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://0.0.0.0:9/",
        "https://[fd00::1]/",
        // A name that resolves to loopback: the resolver checks it.
        "http://localhost:9/",
    ] {
        let message = refused(
            &executor,
            "http_get",
            json!({"url": url}),
            Rule::PrivateNetwork,
        )
        .await;
        assert!(message.contains("allow_private_network: true"), "{message}");
    }
}

#[tokio::test]
async fn only_http_and_https_are_fetched() {
    let tree = Tree::new();
    let executor = tree.executor();
    for url in [
        "file:///etc/passwd",
        "ftp://example.com/",
        "gopher://example.com/",
    ] {
        refused(&executor, "http_get", json!({"url": url}), Rule::HttpScheme).await;
    }
    let err = call(&executor, "http_get", json!({"url": "not a url"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with("`not a url` is not a URL: "),
        "{err}"
    );
}

#[tokio::test]
async fn credentials_and_queries_stay_out_of_messages() {
    let tree = Tree::new();
    let executor = tree.executor();
    let message = refused(
        &executor,
        "http_get",
        json!({"url": "http://user:hunter2@127.0.0.1:9/path?token=s3cret"}),
        Rule::PrivateNetwork,
    )
    .await;
    assert!(
        !message.contains("hunter2") && !message.contains("s3cret"),
        "{message}"
    );
}
