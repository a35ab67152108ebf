// The gov extension: starts `gov lsp` (the command in the `gov.path` setting) for .gov files and
// lets vscode-languageclient speak LSP to it. Everything the editor shows comes from the server,
// so it is exactly what `gov check`, `gov fmt` and `gov inspect` say.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const command = vscode.workspace.getConfiguration("gov").get<string>("path", "gov");
  const server: ServerOptions = { command, args: ["lsp"], transport: TransportKind.stdio };
  const options: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: "gov" }],
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.gov") },
  };
  client = new LanguageClient("gov", "gov", server, options);
  context.subscriptions.push({ dispose: () => void client?.stop() });
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
