import Foundation
@testable import GroveCluster
import GroveTestSupport
import Testing
import ZeroMQ

/// A coordinator removes the socket files it bound when it stops, and only those.
@Suite("BoundSocketFiles", .timeLimit(.minutes(1)))
struct BoundSocketFilesTests {
    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    @Test func theSocketFilesBoundAreRemovedAndNothingElse() throws {
        let directory = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let context = try ZMQContext()
        let socket = try Socket(context, .router)
        try socket.setLinger(milliseconds: 0)
        try socket.bind("ipc://\(directory)/clients")
        let plain = directory + "/notes"
        FileManager.default.createFile(atPath: plain, contents: Data("x".utf8))

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
        let context = try ZMQContext()
        let first = try Socket(context, .router)
        try first.setLinger(milliseconds: 0)
        try first.bind("ipc://\(directory)/clients")
        let files = BoundSocketFiles([first.lastEndpoint])
        first.close()
        // Another coordinator binds the path once this one stopped listening: a new file.
        unlink(directory + "/clients")
        let second = try Socket(context, .router)
        try second.setLinger(milliseconds: 0)
        try second.bind("ipc://\(directory)/clients")
        defer { second.close() }

        files.remove()
        #expect(Self.exists(directory + "/clients"), "the other coordinator's socket must stay")
    }
}
