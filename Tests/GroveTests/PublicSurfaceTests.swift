import Foundation
import Testing

/// What Grove exports to its users stays what was chosen, read from the sources: the library
/// products are the ones users depend on, and GroveExamples is not one of them. A change to the
/// list is meant to be a decision: the failure says where to record it. (GroveWire's wire
/// internals are `@_spi(GroveInternal)`, not `package`: docs/ARCHITECTURE.md, "Modules", says
/// why; GroveWireTests' UserViewTests holds them out of a user's sight.)
@Suite("Public surface", .timeLimit(.minutes(2)))
struct PublicSurfaceTests {
    /// The package's root, found from this file's path (`Tests/GroveTests/…`).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The library products users may depend on. GroveTCA (issue 36): seed 004's composition,
    /// a product of its own so that only its users build swift-dependencies.
    static let libraries: Set<String> = [
        "Grove", "GroveRuntime", "GroveTesting", "GroveTea", "GroveCheck", "GroveWire", "GroveCluster",
        "GroveClient", "GroveWorker", "GroveCoordinator", "GroveTCA",
    ]

    @Test func examplesAreNotAProduct() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let found = Set(manifest.matches(of: /\.library\(name: "([^"]+)"/).map { String($0.output.1) })
        #expect(found == Self.libraries, """
            Package.swift's library products are \(found.sorted()); the chosen ones are \(Self.libraries.sorted()). \
            GroveExamples is to read, not to depend on; change PublicSurfaceTests.libraries and \
            docs/ARCHITECTURE.md ("Modules") only with a reason
            """)
    }
}
