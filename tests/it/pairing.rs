//! Pairing a Mac's Vyre with a box: the code, the device it makes on the box, the credential in
//! the Mac's vault, and ending it from either side.

use serde_json::{Value, json};

use crate::support::*;

async fn mac_and_box() -> (TempHome, InProcess, TempHome, InProcess) {
    let box_home = TempHome::new("pair-box");
    let the_box = InProcess::start(&box_home, vec![]).await;
    let mac_home = TempHome::new("pair-mac");
    std::fs::create_dir_all(mac_home.vyre_home()).unwrap();
    // Local role keeps the vault's key in the OS keychain; this test's machine has none.
    std::fs::write(
        mac_home.home().config_file(),
        r#"{"vault": {"keystore": "file"}}"#,
    )
    .unwrap();
    let mac = InProcess::start_with(&mac_home, vec![], |o| {
        o.role = Some(vyre::kernel::config::Role::Local)
    })
    .await;
    (box_home, the_box, mac_home, mac)
}

fn devices_of_kind(devices: &Value, kind: &str) -> Vec<Value> {
    devices
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == kind)
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mac_pairs_with_a_box_by_code_and_either_side_can_end_it() {
    let (_bh, the_box, _mh, mac) = mac_and_box().await;
    let on_box = the_box.socket_client();
    let on_mac = mac.socket_client();

    let code = on_box.call("pairing.code", &json!({})).await.unwrap();
    let typed = code["code"]
        .as_str()
        .unwrap()
        .replace('-', "")
        .to_lowercase();
    assert_eq!(typed.len(), 12);
    let address = code["address"].as_str().unwrap().to_string();
    let paired = on_mac
        .call(
            "pairing.add",
            &json!({ "address": format!("http://{address}/"), "code": typed, "name": "test mac" }),
        )
        .await
        .unwrap();
    let device = paired["device"].as_str().unwrap().to_string();
    let on_the_box = devices_of_kind(
        &on_box.call("devices.list", &json!({})).await.unwrap(),
        "vyre",
    );
    assert_eq!(on_the_box.len(), 1);
    assert_eq!(on_the_box[0]["id"], device.as_str());
    assert_eq!(on_the_box[0]["name"], "test mac");
    // The credential is in the Mac's vault, by name only.
    let items = on_mac.call("vault.list", &json!({})).await.unwrap();
    let item = format!("box-{}", paired["id"].as_str().unwrap());
    assert!(
        items
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["name"] == item.as_str()),
        "{items}"
    );
    let list = on_mac.call("pairing.list", &json!({})).await.unwrap();
    assert_eq!(list[0]["status"], "paired", "{list}");
    assert!(
        list[0]["box_name"].is_string(),
        "the box says its name: {list}"
    );
    // The box's screens hear that its code was spent.
    let events = on_box
        .call("system.events", &json!({ "types": ["pairing.paired"] }))
        .await
        .unwrap();
    assert_eq!(events[0]["payload"]["device"], device.as_str(), "{events}");

    // A code works once, and only as a pairing code.
    let again = on_mac
        .call("pairing.add", &json!({ "address": address, "code": typed }))
        .await
        .unwrap_err();
    assert_eq!(again.code(), Some("code_used"));
    let made_up = on_mac
        .call(
            "pairing.add",
            &json!({ "address": address, "code": "0000-0000-0000" }),
        )
        .await
        .unwrap_err();
    assert_eq!(made_up.code(), Some("invalid_code"));
    let nowhere = on_mac
        .call(
            "pairing.add",
            &json!({ "address": "127.0.0.1:9", "code": "0000-0000-0000" }),
        )
        .await
        .unwrap_err();
    assert_eq!(nowhere.code(), Some("box_unreachable"));
    let bad = on_mac
        .call(
            "pairing.add",
            &json!({ "address": "box.example", "code": "x" }),
        )
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Some("invalid_input"));

    // The box revokes the Mac: the Mac sees it.
    on_box
        .call("devices.revoke", &json!({ "id": device }))
        .await
        .unwrap();
    let list = on_mac.call("pairing.list", &json!({})).await.unwrap();
    assert_eq!(list[0]["status"], "revoked", "{list}");
    let removed = on_mac
        .call("pairing.remove", &json!({ "id": list[0]["id"] }))
        .await
        .unwrap();
    assert_eq!(removed["revoked_on_box"], true, "revoked there already");

    // The Mac ends a pairing: its device on the box is revoked, its credential forgotten.
    let code = on_box.call("pairing.code", &json!({})).await.unwrap();
    let paired = on_mac
        .call(
            "pairing.add",
            &json!({ "address": address, "code": code["code"] }),
        )
        .await
        .unwrap();
    let removed = on_mac
        .call("pairing.remove", &json!({ "id": paired["id"] }))
        .await
        .unwrap();
    assert_eq!(removed["revoked_on_box"], true);
    let devices = devices_of_kind(
        &on_box.call("devices.list", &json!({})).await.unwrap(),
        "vyre",
    );
    assert!(
        devices.iter().all(|d| d["revoked_at"].is_i64()),
        "{devices:?}"
    );
    assert_eq!(
        on_mac.call("pairing.list", &json!({})).await.unwrap(),
        json!([])
    );
    let items = on_mac.call("vault.list", &json!({})).await.unwrap();
    assert!(
        items
            .as_array()
            .unwrap()
            .iter()
            .all(|i| !i["name"].as_str().unwrap().starts_with("box-")),
        "{items}"
    );
    let unknown = on_mac
        .call("pairing.remove", &json!({ "id": "nope" }))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Some("unknown_pairing"));

    // A pairing code is not a browser's link, and only a person makes one.
    let code = on_box.call("pairing.code", &json!({})).await.unwrap();
    let (status, body) = the_box
        .http_client(None)
        .json(
            hyper::Method::POST,
            "/v1/session/redeem",
            Some(serde_json::to_vec(&json!({ "token": code["code"] })).unwrap()),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("pairing_code"))
    );
    mac.stop().await;
    the_box.stop().await;
}
