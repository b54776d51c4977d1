import Foundation
import Testing

/// The multi-process runtime's rooms depend one way (docs/ARCHITECTURE.md, "Modules"):
/// GroveCluster, the shared model, below; GroveClient, GroveWorker and GroveCoordinator above it,
/// side by side, none importing another. Read from Package.swift and from each module's sources,
/// so an arrow added the wrong way fails here, with where it was added, before anyone links an
/// app that sends events against GRDB and the worker runtime again.
@Suite("Module arrows", .timeLimit(.minutes(2)))
struct ModuleArrowTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What each room must not depend on, in Package.swift or in an `import` of its sources.
    static let forbidden: [String: Set<String>] = [
        // The shared model: nothing of a role, no store, no lifecycle, no runtime.
        "GroveCluster": ["GroveClient", "GroveWorker", "GroveCoordinator", "GroveRuntime", "GRDB", "GRDBSQLite",
                         "ServiceLifecycle", "ArgumentParser", "Crypto"],
        // What an app that only sends events links: the wire and ZeroMQ.
        "GroveClient": ["GroveWorker", "GroveCoordinator", "GroveRuntime", "GRDB", "GRDBSQLite", "ServiceLifecycle", "Crypto"],
        "GroveCoordinator": ["GroveWorker", "GroveClient", "GroveRuntime", "GRDB", "GRDBSQLite", "ServiceLifecycle", "Crypto"],
        "GroveWorker": ["GroveClient", "GroveCoordinator"],
        // The live view's pure core: what to show and who may do what, no transport at all
        // (fsm-launch's LiveView moves its bytes, with Hummingbird and a Watcher).
        "GroveView": ["GroveClient", "GroveWorker", "GroveCoordinator", "GroveRuntime", "ZeroMQ", "Hummingbird", "GRDB", "GRDBSQLite",
                      "ServiceLifecycle"],
    ]

    /// The dependencies Package.swift gives `target`: its names and its products' names.
    static func dependencies(of target: String, in manifest: String) throws -> Set<String> {
        let start = try #require(manifest.firstMatch(of: try Regex(#"\.target\(\s*name: ""# + target + #"","#)),
                                 "Package.swift has no .target named \(target)")
        let rest = manifest[start.range.upperBound...]
        let end = try #require(rest.range(of: "swiftSettings:"), "target \(target) has no swiftSettings in Package.swift")
        let block = String(rest[..<end.lowerBound]).replacing(/package: "[^"]+"/, with: "")
        return Set(block.matches(of: /"([^"]+)"/).map { String($0.output.1) })
    }

    /// The modules `module`'s sources import, each with the first file that does.
    static func imports(of module: String) throws -> [String: String] {
        let directory = root.appendingPathComponent("Sources/\(module)")
        let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
        var found: [String: String] = [:]
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for name in importedModules(in: text) {
                found[name] = found[name] ?? file.lastPathComponent
            }
        }
        return found
    }

    /// The modules `text` imports, attributes and all (`@preconcurrency import`,
    /// `@_spi(GroveInternal) import`: an attribute's arguments in parentheses too).
    static func importedModules(in text: String) -> [String] {
        text.matches(of: /(?m)^(?:@\w+(?:\([\w, ]*\))? )*(?:public |package |internal )?import (\w+)/)
            .map { String($0.output.1) }
    }

    @Test func importsWithAttributesAreRead() {
        let text = """
            import Foundation
            @preconcurrency import Dispatch
            @_spi(GroveInternal) import GroveWire
            @_spi(GroveInternal) public import ZeroMQ
            """
        #expect(Self.importedModules(in: text) == ["Foundation", "Dispatch", "GroveWire", "ZeroMQ"])
    }

    @Test("Package.swift gives no room of the runtime a dependency against the arrows",
          arguments: ["GroveCluster", "GroveClient", "GroveCoordinator", "GroveWorker", "GroveView"])
    func manifestArrows(module: String) throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let wrong = try Self.dependencies(of: module, in: manifest).intersection(Self.forbidden[module] ?? [])
        #expect(wrong.isEmpty, """
            Package.swift gives \(module) \(wrong.sorted()), against the arrows of docs/ARCHITECTURE.md ("Modules"): \
            move what it needs into GroveCluster, the shared model, rather than add the arrow
            """)
    }

    @Test("no room of the runtime imports what its arrows forbid",
          arguments: ["GroveCluster", "GroveClient", "GroveCoordinator", "GroveWorker", "GroveView"])
    func sourceArrows(module: String) throws {
        let imports = try Self.imports(of: module)
        #expect(!imports.isEmpty, "found no sources of \(module) under Sources/\(module)")
        for name in imports.keys.sorted() where Self.forbidden[module]?.contains(name) == true {
            Issue.record("""
                Sources/\(module)/…/\(imports[name]!) imports \(name), against the arrows of docs/ARCHITECTURE.md ("Modules"): \
                move what it needs into GroveCluster, the shared model, rather than add the arrow
                """)
        }
    }
}
