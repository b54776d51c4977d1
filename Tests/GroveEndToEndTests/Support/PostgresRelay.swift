import Foundation

/// A byte relay of the tests' own, in Python (asyncio), that carries PostgreSQL connections
/// between network namespaces through a Unix socket: a pathname socket lives in the file
/// system, which every namespace of ``NetworkHosts`` shares, while each has a loopback of its own.
///
/// Two ends, one script:
/// - `unix-to-tcp SOCKET HOST PORT`, in the root namespace: listens on `SOCKET` (mode 0600) and
///   connects each connection to the server at `HOST:PORT`;
/// - `tcp-to-unix HOST PORT SOCKET`, in a host's namespace: listens on its `HOST:PORT` and
///   connects each connection to `SOCKET`.
///
/// Each prints `ready` once it listens and `accepted <n>` for every connection, so a test can
/// wait for the first and show with the second that traffic went through it. Bytes are copied
/// as they come, both ways; a connection that cannot be made at the far end is closed. A relay
/// whose parent (the test process) died exits within a second: the root end is in no namespace
/// that a later run's clean-up would empty.
enum PostgresRelay {
    /// Where the script is written: beside the socket, in the relay's own directory.
    static let fileName = "postgres-relay.py"

    static let script = #"""
        import asyncio, os, sys

        accepted = 0

        async def pipe(reader, writer):
            try:
                while True:
                    data = await reader.read(65536)
                    if not data:
                        break
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                try:
                    writer.close()
                except OSError:
                    pass

        def handler(connect):
            async def handle(reader, writer):
                global accepted
                accepted += 1
                print("accepted", accepted, flush=True)
                try:
                    far_reader, far_writer = await connect()
                except OSError as error:
                    print("cannot reach the far end:", error, file=sys.stderr, flush=True)
                    writer.close()
                    return
                await asyncio.gather(pipe(reader, far_writer), pipe(far_reader, writer))
            return handle

        async def main(mode, args):
            if mode == "unix-to-tcp":
                path, host, port = args[0], args[1], int(args[2])
                old = os.umask(0o177)
                server = await asyncio.start_unix_server(
                    handler(lambda: asyncio.open_connection(host, port)), path=path)
                os.umask(old)
            elif mode == "tcp-to-unix":
                host, port, path = args[0], int(args[1]), args[2]
                server = await asyncio.start_server(
                    handler(lambda: asyncio.open_unix_connection(path)), host=host, port=port, reuse_address=True)
            else:
                sys.exit("usage: postgres-relay.py unix-to-tcp SOCKET HOST PORT | tcp-to-unix HOST PORT SOCKET")
            print("ready", flush=True)
            asyncio.get_running_loop().create_task(orphaned(os.getppid()))
            async with server:
                await server.serve_forever()

        async def orphaned(parent):
            # The test process that started it died without tearing down: go too.
            while os.getppid() == parent:
                await asyncio.sleep(1)
            os._exit(0)

        asyncio.run(main(sys.argv[1], sys.argv[2:]))
        """#

    /// How many connections `relay` has accepted, from the lines it printed.
    static func accepted(by relay: ChildProcess) -> Int {
        relay.stdout.split(separator: "\n").filter { $0.hasPrefix("accepted ") }.count
    }
}
