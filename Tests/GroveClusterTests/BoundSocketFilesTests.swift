import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveTestSupport
import Testing
import ZeroMQ

/// A coordinator removes the socket files it bound when it stops, and only those.
@Suite("BoundSocketFiles", .timeLimit(.minutes(2)))
struct BoundSocketFilesTests {
    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    @Test func theSocketFilesBoundAreRemovedAndNothingElse() throws {
        let directory = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (_, socket) = try LocalEndpointTests.bound("ipc://\(directory)/clients")
        let plain = directory + "/notes"
        try #require(FileManager.default.createFile(atPath: plain, contents: Data("x".utf8)))

        let files = BoundSocketFiles([socket.lastEndpoint, "ipc://\(plain)", "tcp://127.0.0.1:5555", "ipc://@abstract"])
        #expect(files.paths == [directory + "/clients"], "only the socket file is noted")
        socket.close()
        files.remove()
        #expect(!Self.exists(directory + "/clients"))
        #expect(Self.exists(plain), "a file that is no socket is never removed")
    }

    @Test func aSocketBoundAtThePathSinceIsLeftAlone() throws {
        let directory = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (_, first) = try LocalEndpointTests.bound("ipc://\(directory)/clients")
        let files = BoundSocketFiles([first.lastEndpoint])
        // Another socket at the path: a new file (made while the first is still open, since
        // libzmq unlinks the path itself, later, on its own thread, once the first closes).
        unlink(directory + "/clients")
        let (_, second) = try LocalEndpointTests.bound("ipc://\(directory)/clients")
        defer {
            second.close()
            first.close()
        }

        files.remove()
        #expect(Self.exists(directory + "/clients"), "the other coordinator's socket must stay")
    }
}
