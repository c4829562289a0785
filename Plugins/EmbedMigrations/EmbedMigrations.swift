import Foundation
import PackagePlugin

/// Embeds every `migrations/NNNN_name.sql` of the package into the target as Swift source.
///
/// The SQL files at the top level stay the only copy of the schema: the generated file
/// lives in the build folder and is rewritten whenever a migration changes or is added.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.package.directoryURL.appending(path: "migrations")
        let files = try FileManager.default
            .contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) SQL migrations",
                executable: try context.tool(named: "embed-migrations").url,
                arguments: [output.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
