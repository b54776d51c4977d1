// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Grove",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Grove", targets: ["Grove"]),
        .library(name: "GroveRuntime", targets: ["GroveRuntime"]),
        .library(name: "GroveTesting", targets: ["GroveTesting"]),
        .library(name: "GroveTea", targets: ["GroveTea"]),
        .library(name: "GroveTCA", targets: ["GroveTCA"]),
        .executable(name: "grove-demo", targets: ["GroveDemo"]),
        .executable(name: "grove-bench", targets: ["GroveBench"]),
        .library(name: "GroveCluster", targets: ["GroveCluster"]),
        .library(name: "GroveClient", targets: ["GroveClient"]),
        .library(name: "GroveWorker", targets: ["GroveWorker"]),
        .library(name: "GroveCoordinator", targets: ["GroveCoordinator"]),
        .library(name: "GroveWire", targets: ["GroveWire"]),
        .executable(name: "fsm-launch", targets: ["FSMLaunch"]),
        .executable(name: "fsm-worker", targets: ["FSMWorker"]),
        .executable(name: "fsm-send", targets: ["FSMSend"]),
        .executable(name: "fsm-load", targets: ["FSMLoad"]),
        .library(name: "GroveCheck", targets: ["GroveCheck"]),
        .executable(name: "fsm-check", targets: ["FSMCheck"]),
        .executable(name: "fsm-keys", targets: ["FSMKeys"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/pointfreeco/swift-custom-dump", from: "1.7.3"),
        // GroveTCA's `@Dependency`, for GroveTCA and its users only. No traits (Clocks,
        // CombineSchedulers): its `Dependencies` builds swift-concurrency-extras and
        // xctest-dynamic-overlay's IssueReporting, ~30 s of a cold debug build on 2 cores.
        .package(url: "https://github.com/pointfreeco/swift-dependencies", from: "1.17.1", traits: []),
        // Metrics (docs/ARCHITECTURE.md, "Metrics"): swift-metrics is the API the processes count
        // through; swift-prometheus renders the coordinator's registry as Prometheus text.
        // With swift-atomics, 36 s of a cold debug build on 2 cores shared at load 16 (9.5 s of CPU).
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The live view (docs/ARCHITECTURE.md, "Live view"): fsm-launch's HTTP server, pages and
        // server-sent events. No traits: swift-configuration is not needed.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // Traces (docs/ARCHITECTURE.md, "Traces"): the API every process makes its spans
        // through; no exporter here (FSMTelemetry bootstraps one when asked).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // The executables' exporter, when the environment names an OTLP endpoint (GroveOTel).
        // OTLP/HTTP only: its gRPC trait would bring grpc-swift and its transport in too.
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // The shared machine store (docs/ARCHITECTURE.md, "The PostgreSQL store"): postgres-nio
        // on swift-nio; swift-nio-ssl for `sslmode=require`. Named here because the store
        // imports their modules; postgres-nio depends on them anyway.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // Pure core: machines, effects, ids, dialect adapters. No Foundation, no runtime.
        .target(name: "Grove", swiftSettings: strict),
        // Local runtime: one actor per machine instance.
        .target(
            name: "GroveRuntime",
            dependencies: [
                "Grove",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // Deterministic test kit: test clock and exhaustive test store. CustomDump for the
        // field-by-field diff a mismatch prints, as TCA's TestStore does.
        .target(
            name: "GroveTesting",
            dependencies: [
                "Grove", "GroveRuntime", "GroveCheck",
                .product(name: "CustomDump", package: "swift-custom-dump"),
            ],
            swiftSettings: strict
        ),
        // SwiftTea's `Store` and `Effect<Action>`, for reducers written as free functions or closures.
        .target(
            name: "GroveTea",
            dependencies: ["Grove", "GroveRuntime", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // Seed 004's (TCA-SM) composition: `Reducer` with `body`, `Reduce`, `Scope`, and the
        // `StateMachine` reducer protocol, lowered onto SwiftTea's reducer machine so that `Store`,
        // workers and `ReducerTestStore` run it; `@Dependency` is swift-dependencies'.
        .target(
            name: "GroveTCA",
            dependencies: [
                "Grove", "GroveRuntime", "GroveTea",
                .product(name: "Dependencies", package: "swift-dependencies"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The seed patterns as real machines, to read and for fsm-worker, grove-demo, fsm-check and
        // the tests. Not a product: users write their own machines (ARCHITECTURE.md, "Modules").
        .target(name: "GroveExamples", dependencies: ["Grove", "GroveRuntime", "GroveTea", "GroveCheck"], swiftSettings: strict),
        // State-graph exploration: completeness, determinism, reachability; Mermaid and DOT. Pure.
        .target(name: "GroveCheck", dependencies: ["Grove"], swiftSettings: strict),
        .executableTarget(
            name: "FSMCheck",
            dependencies: [
                "GroveCheck", "GroveExamples",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "GroveDemo",
            dependencies: [
                "Grove", "GroveRuntime", "GroveExamples",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "GroveBench",
            dependencies: [
                "Grove", "GroveRuntime", "GroveWire", "GroveWorker",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // libzmq from the system (apt: libzmq3-dev). Never API: only ZeroMQ imports it. No
        // pkgConfig: Debian's libzmq.pc adds -isystem flags SwiftPM refuses with a warning, and
        // zmq.h is in /usr/include, so the module map's `link "zmq"` is all it takes.
        .systemLibrary(name: "CZeroMQ", providers: [.apt(["libzmq3-dev"])]),
        // Our thin libzmq wrapper: context, sockets, options, one I/O thread per process.
        .target(
            name: "ZeroMQ",
            dependencies: [
                "CZeroMQ",
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // Wire protocol v1: frame header, message kinds, control payloads, the binary codec.
        .target(name: "GroveWire", dependencies: ["Grove", "GroveMacros"], swiftSettings: strict),
        // @BinaryCodable: generated binary coding for Codable structs and enums.
        .macro(
            name: "GroveMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ],
            swiftSettings: strict
        ),
        // The multi-process runtime in four rooms, arrows one way (ARCHITECTURE.md, "Modules"):
        // GroveCluster, the shared model every role reads (topology, security, endpoints), and
        // above it, side by side, GroveClient, GroveWorker and GroveCoordinator, none of which
        // imports another. ModuleArrowTests holds them to it.
        .target(
            name: "GroveCluster",
            dependencies: [
                "GroveWire", "ZeroMQ",
                // WireTracing: the trace context on the wire, to and from the process's tracer.
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                // ClientLedger: the busies owed to a client, as runs.
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict,
            plugins: ["EmbedDefaultTopology"]
        ),
        // What an app that sends events or watches needs: the wire and ZeroMQ, no store, no runtime.
        .target(
            name: "GroveClient",
            dependencies: [
                "GroveCluster", "GroveWire", "ZeroMQ",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The coordinator (core and driver) and the supervisor's core, fsm-launch's restart policy.
        .target(
            name: "GroveCoordinator",
            dependencies: [
                "GroveCluster", "GroveWire", "ZeroMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
        // The worker runtime, its store and its audit log. ArgumentParser for the options every
        // worker executable reads (`Worker.Options`); ServiceLifecycle for how a worker stops
        // (signals, graceful shutdown); GRDB for the SQLite machine store (apt: libsqlite3-dev,
        // which GRDB's own system library target links); swift-crypto for the audit log's SHA-256.
        .target(
            name: "GroveWorker",
            dependencies: [
                // GroveCheck (pure) for `--describe`: the state graph fsm-check --worker reads.
                "GroveCluster", "Grove", "GroveRuntime", "GroveWire", "ZeroMQ", "GroveCheck",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                // The wake times of passivated instances with timers (Passivation.swift).
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C calls, for the journal's appends (SQLiteJournalAppend says why).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // Builds Topologies/default.json into GroveCluster (`Topology.defaultJSON`): the file is
        // the one source of the default topology, and no resource bundle must travel beside
        // the executables.
        .plugin(name: "EmbedDefaultTopology", capability: .buildTool(), dependencies: ["GroveEmbedTopology"]),
        .executableTarget(name: "GroveEmbedTopology", swiftSettings: strict),
        // The live view's pure core: what the page shows and who may do what. No sockets, no HTTP.
        // swift-crypto for the tokens a client key makes itself (X25519 and HMAC: ViewKeyToken).
        .target(
            name: "GroveView",
            dependencies: ["GroveCluster", "GroveWire", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        // Exports the executables' spans over OTLP/HTTP through swift-otel, when the environment
        // names an endpoint (docs/ARCHITECTURE.md, "Traces"). Not a product: a user's own worker
        // bootstraps the tracer of its choice.
        .target(
            name: "GroveOTel",
            dependencies: [
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "FSMLaunch",
            dependencies: [
                "GroveCluster", "GroveCoordinator", "GroveWorker", "ZeroMQ", "GroveView", "GroveClient", "GroveOTel",
                .product(name: "Hummingbird", package: "hummingbird"),
                // Its connection limit (`MaximumAvailableConnections`); built for Hummingbird anyway.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "FSMWorker",
            dependencies: [
                "GroveCluster", "GroveWorker", "GroveExamples", "GroveOTel",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "FSMSend",
            dependencies: [
                "GroveCluster", "GroveClient", "GroveView", "GroveOTel",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "FSMLoad",
            dependencies: [
                "GroveCluster", "GroveClient", "GroveWire", "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "FSMKeys",
            dependencies: [
                "GroveCluster", "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // What several test targets share: the `.ownThread` trait, `typeCheck(_:)` (swiftc on a
        // program, for tests that show what does not compile) and `ManualSleeper`. Not a product.
        .target(name: "GroveTestSupport", path: "Tests/GroveTestSupport", swiftSettings: strict),
        // A user's own worker, outside Grove's targets: its `Checkout` machine imports Grove as a
        // user's package does, and `fsm-check --worker ShopWorker Checkout` checks it
        // (GroveEndToEndTests' FSMCheckWorkerTests). Built by `swift build`; not a product.
        .executableTarget(
            name: "ShopWorker",
            dependencies: ["Grove", "GroveCheck", "GroveWorker"],
            path: "Tests/Fixtures/ShopWorker",
            swiftSettings: strict
        ),
        // Seed 004's features that run both in SeedTCASMTests and on a worker (SeedTCASMWorker):
        // the seed's texts, so Swift 5 mode and silenced warnings as the seed test targets.
        .target(
            name: "SeedTCASMFeatures",
            dependencies: ["Grove", "GroveTCA", "GroveWorker", .product(name: "Dependencies", package: "swift-dependencies")],
            path: "Tests/Fixtures/SeedTCASMFeatures",
            swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-suppress-warnings"])]
        ),
        // A worker hosting seed 004's MyFeature and ErrorHandlingFeature (GroveEndToEndTests'
        // SeedTCASMWorkerTests). Built by `swift build`; not a product.
        .executableTarget(
            name: "SeedTCASMWorker",
            dependencies: ["SeedTCASMFeatures", "GroveWorker"],
            path: "Tests/Fixtures/SeedTCASMWorker",
            swiftSettings: strict
        ),
        .testTarget(name: "ZeroMQTests", dependencies: ["ZeroMQ", "GroveTestSupport"], swiftSettings: strict),
        .testTarget(name: "GroveWireTests", dependencies: ["GroveWire", "GroveTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "GroveMacrosTests",
            dependencies: [
                "GroveMacros",
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GroveClusterTests",
            dependencies: [
                "GroveCluster", "GroveClient", "GroveCoordinator", "GroveWorker", "GroveWire", "Grove", "GroveRuntime", "GroveExamples", "ZeroMQ", "GroveTestSupport",
                "GroveCheck",
                // TestClock, for a worker whose machines' timers run on a test's time.
                "GroveTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                // What the PostgreSQL store's tests read and clean up behind it.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GroveEndToEndTests",
            // GroveClient: DirectHandoffTests drive the direct road with the `Client` library itself.
            dependencies: ["GroveWire", "GroveClient", "ZeroMQ"],
            swiftSettings: strict
        ),
        .testTarget(name: "GroveTests", dependencies: ["Grove"], swiftSettings: strict),
        .testTarget(
            name: "GroveViewTests",
            dependencies: ["GroveView", "GroveCluster", "GroveWire", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GroveTCATests",
            dependencies: [
                "Grove", "GroveTCA", "GroveTea", "GroveTesting",
                .product(name: "Dependencies", package: "swift-dependencies"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GroveRuntimeTests",
            dependencies: ["Grove", "GroveRuntime", "GroveTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GroveTestingTests",
            dependencies: ["Grove", "GroveRuntime", "GroveTesting"],
            swiftSettings: strict
        ),
        // The code examples of Oak's seed documents, as written, with their behaviour tested. Not
        // `strict`: the seeds write existentials without `any` (`case failed(Error)`). Two seed
        // texts have warnings (an unused binding, a dead `default`) that editing them would remove
        // with the text; they are silenced here only (docs/DIALECTS.md lists them).
        .testTarget(
            name: "SeedOakTests",
            dependencies: ["Grove", "GroveRuntime", "GroveTesting", "GroveCheck", "GroveTestSupport"],
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]
        ),
        // Seed 002's (SwiftTea) code examples as written, on `Store`. Swift 5 language mode: the
        // seed's `retryable` captures non-Sendable closures in a task, an error in Swift 6 and a
        // warning in Swift 5, silenced like SeedOakTests' (docs/DIALECTS.md).
        .testTarget(
            name: "SeedTeaTests",
            dependencies: ["Grove", "GroveRuntime", "GroveTea", "GroveTesting"],
            swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-suppress-warnings"])]
        ),
        // Seed 004's (TCA-SM) code examples as written, inside features of the reader's.
        .testTarget(
            name: "SeedTCASMTests",
            dependencies: [
                "Grove", "GroveRuntime", "GroveTestSupport", "GroveTCA", "GroveTea", "GroveTesting", "SeedTCASMFeatures",
                .product(name: "Dependencies", package: "swift-dependencies"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-suppress-warnings"])]
        ),
        // Seed 003's (StateMachinePackage) code example with the smallest changes that make it
        // compile (each marked), run through `ViewStateMachine`. Swift 5 mode, as the other seeds:
        // the seed's `Load` holds a non-Sendable closure its side effect captures.
        .testTarget(
            name: "SeedStateMachineTests",
            dependencies: ["Grove", "GroveRuntime", "GroveTestSupport"],
            swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-suppress-warnings"])]
        ),
        .testTarget(
            name: "GroveCheckTests",
            dependencies: ["Grove", "GroveCheck", "GroveTesting", "GroveExamples"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GroveExamplesTests",
            dependencies: ["Grove", "GroveRuntime", "GroveTesting", "GroveExamples", "GroveTestSupport"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
