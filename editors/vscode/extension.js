// The VS Code client of the Nagi language server: starts `nagic lsp` (the executable the
// `nagi.server.path` setting names) over stdio for `.nagi` files.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("nagi").get("server.path", "nagic");
  const server = { command, args: ["lsp"] };
  client = new LanguageClient(
    "nagi",
    "Nagi language server",
    { run: server, debug: server },
    { documentSelector: [{ scheme: "file", language: "nagi" }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
