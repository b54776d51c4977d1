extension PostgresMachineStore {
    /// The format this Grove writes. `grove_format` holds the highest a Grove has written; a
    /// database holding a higher one was written by a newer Grove and is refused. 2: the
    /// journal is in `grove_journal_runs` (``runsCommitFunction``), which a Grove of format 1
    /// does not read, so it must not open the database.
    static let format = 2

    /// The tables every topology and worker of one database share, told apart by `topology`
    /// (the topology's name) and `worker` (the instance name). A machine's row names the worker
    /// that owns it (`owner`): a worker reads and writes only its own, and ownership can move
    /// (issue 37's handoff). `grove_workers.epoch` is the fencing token: a worker takes the
    /// next one when it opens the store, and every commit checks it in the same transaction,
    /// so a worker that a newer one replaced cannot commit after it.
    ///
    /// Created under a transaction-scoped advisory lock, so workers starting together do not
    /// race; `IF NOT EXISTS` throughout, so creating is also checking.
    /// A record that does not hold only its state, its first byte not 3 (an empty one too): the
    /// condition of `grove_machines_to_run`; and one that does.
    static let toRun = "(snapshot < '\\x03'::bytea OR snapshot >= '\\x04'::bytea)"
    static let rests = "(snapshot >= '\\x03'::bytea AND snapshot < '\\x04'::bytea)"

    static let schema: [String] = [
        "SELECT pg_advisory_xact_lock(7306482610853)",
        """
        CREATE TABLE IF NOT EXISTS grove_format (format integer NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS grove_workers (
            topology text NOT NULL, worker text NOT NULL, epoch bigint NOT NULL,
            PRIMARY KEY (topology, worker))
        """,
        """
        CREATE TABLE IF NOT EXISTS grove_machines (
            topology text NOT NULL, address text NOT NULL, owner text NOT NULL, type text NOT NULL,
            snapshot bytea NOT NULL, sequence bigint NOT NULL,
            PRIMARY KEY (topology, address))
        """,
        "CREATE INDEX IF NOT EXISTS grove_machines_owner ON grove_machines (topology, owner)",
        // The records that must run at start (issue 37): all but those holding only their state
        // (``MachineRecord/holdsOnlyState``, first byte 3). Built once on a database of before.
        "CREATE INDEX IF NOT EXISTS grove_machines_to_run ON grove_machines (topology, owner) WHERE \(toRun)",
        """
        CREATE TABLE IF NOT EXISTS grove_journal (
            topology text NOT NULL, address text NOT NULL, sequence bigint NOT NULL,
            writer text NOT NULL, event bytea NOT NULL, time bigint NOT NULL,
            PRIMARY KEY (topology, address, sequence))
        """,
        // Format 2's journal: one row per address per commit, its entries in sequence order,
        // keyed by the last one's sequence (``runsCommitFunction``).
        """
        CREATE TABLE IF NOT EXISTS grove_journal_runs (
            topology text NOT NULL, address text NOT NULL, last bigint NOT NULL, writer text NOT NULL,
            sequences bigint[] NOT NULL, events bytea[] NOT NULL, times bigint[] NOT NULL,
            PRIMARY KEY (topology, address, last))
        """,
        """
        CREATE TABLE IF NOT EXISTS grove_dead_letters (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            topology text NOT NULL, worker text NOT NULL, address text NOT NULL, type text NOT NULL,
            event bytea NOT NULL, "binary" boolean NOT NULL, error text NOT NULL, crashes integer NOT NULL,
            time bigint NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS grove_crashes (
            topology text NOT NULL, worker text NOT NULL, address text NOT NULL, event bytea NOT NULL,
            count integer NOT NULL, time bigint NOT NULL,
            PRIMARY KEY (topology, worker, address, event))
        """,
        """
        CREATE TABLE IF NOT EXISTS grove_answers (
            topology text NOT NULL, address text NOT NULL, client bytea NOT NULL, sequence bigint NOT NULL,
            slot bigint NOT NULL, kind integer NOT NULL, flags integer NOT NULL, payload bytea NOT NULL,
            PRIMARY KEY (topology, address, client, sequence))
        """,
        commitFunction,
        claimFunction,
        answeringCommitFunction,
        probingCommitFunction,
        runsCommitFunction,
    ]

    /// Adopting a keyed instance (``MachineStore/claim(_:)``): the fence, then the record made
    /// this worker's, in one transaction. The previous owner's next commit that writes it, or
    /// appends to its journal, fails with `GR002`.
    ///
    /// A claim that changes nothing writes nothing: a key with no record (a new instance, which
    /// every turn that spawns one claims) or one this worker owns already is read without
    /// taking the fence's row lock, which is a write whose commit waited for the server's WAL
    /// flush, a few milliseconds each (`Scripts/handoff-bench.sh`). A claim that moves a record
    /// does not wait for that flush either (`synchronous_commit` off for its transaction): the
    /// WAL is one sequence, so the adopter's first commit that is flushed flushes the claim
    /// before it, and a claim lost with the server before that has no acknowledged write after
    /// it (the adopter's commits are refused `GR002` and it drops the instance; the old owner
    /// still owns it). `_v2`: `_v1`'s body always locked and waited; a new body needs a new
    /// name, as an older build replaces its own (docs/ARCHITECTURE.md, Older builds).
    static let claimFunction = """
        CREATE OR REPLACE FUNCTION grove_claim_v2(p_topology text, p_worker text, p_epoch bigint, p_address text)
        RETURNS TABLE (c_type text, c_snapshot bytea, c_sequence bigint) LANGUAGE plpgsql AS $grove$
        DECLARE
            current_epoch bigint;
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM grove_machines m
                           WHERE m.topology = p_topology AND m.address = p_address AND m.owner <> p_worker) THEN
                RETURN QUERY SELECT m.type, m.snapshot, m.sequence FROM grove_machines m
                    WHERE m.topology = p_topology AND m.address = p_address;
                RETURN;
            END IF;
            PERFORM set_config('synchronous_commit', 'off', true);
            SELECT epoch INTO current_epoch FROM grove_workers
                WHERE topology = p_topology AND worker = p_worker FOR SHARE;
            IF current_epoch IS DISTINCT FROM p_epoch THEN
                RAISE EXCEPTION 'worker % of topology % holds epoch %, the store has %: a newer process of that worker took over',
                    p_worker, p_topology, p_epoch, current_epoch USING ERRCODE = 'GR001';
            END IF;
            RETURN QUERY UPDATE grove_machines m SET owner = p_worker
                WHERE m.topology = p_topology AND m.address = p_address
                RETURNING m.type, m.snapshot, m.sequence;
        END
        $grove$
        """

    /// One group commit in one round trip and one transaction (the statement's own): the
    /// fence first, then the parts in ``MachineStore/commit(_:)``'s order. Errors carry codes
    /// of Grove's own class (`GR`): `GR001` fenced, `GR002` machines another worker owns
    /// (claimed in a handoff: every such address of the commit, as a JSON array in the error's
    /// DETAIL, so the worker commits again without them), `GR003` a journal entry not after the
    /// last one.
    ///
    /// The machines the commit writes are locked (`FOR SHARE`) before their owners are read,
    /// so a claim (an `UPDATE`) waits for the commit to end, or the commit sees the claim.
    /// They are locked in address order (bytes, `COLLATE "C"`), and the records come in that
    /// order too (``PostgresMachineStore/commit(_:)``), so two commits of one address (a
    /// paused worker's and its successor's) cannot wait on each other.
    /// `_v2`: the body changed from `_v1` (refusals of journal appends and truncations, the
    /// refused addresses), so a worker of an older build, which creates `_v1`, cannot replace it.
    static let commitFunction = """
        CREATE OR REPLACE FUNCTION grove_commit_v2(
            p_topology text, p_worker text, p_epoch bigint, p_disk boolean, p_removed text[],
            p_address text[], p_type text[], p_snapshot bytea[], p_sequence bigint[],
            p_j_address text[], p_j_sequence bigint[], p_j_event bytea[], p_j_time bigint[],
            p_t_address text[], p_t_through bigint[],
            p_d_address text[], p_d_type text[], p_d_event bytea[], p_d_binary boolean[], p_d_error text[],
            p_d_crashes integer[], p_d_time bigint[]
        ) RETURNS void LANGUAGE plpgsql AS $grove$
        DECLARE
            current_epoch bigint;
            written bigint;
            refused text[];
            owners text;
        BEGIN
            IF NOT p_disk THEN
                PERFORM set_config('synchronous_commit', 'off', true);
            END IF;
            SELECT epoch INTO current_epoch FROM grove_workers
                WHERE topology = p_topology AND worker = p_worker FOR SHARE;
            IF current_epoch IS DISTINCT FROM p_epoch THEN
                RAISE EXCEPTION 'worker % of topology % holds epoch %, the store has %: a newer process of that worker took over',
                    p_worker, p_topology, p_epoch, current_epoch USING ERRCODE = 'GR001';
            END IF;
            IF cardinality(p_address) > 0 OR cardinality(p_j_address) > 0 OR cardinality(p_t_address) > 0 THEN
                -- A machine adopted by another worker (handoff) is no longer this one's to write.
                PERFORM 1 FROM grove_machines m
                    WHERE m.topology = p_topology AND m.address = ANY(p_address || p_j_address || p_t_address)
                    ORDER BY m.address COLLATE "C" FOR SHARE;
                SELECT array_agg(m.address ORDER BY m.address), string_agg(m.address || ' (owned by ' || m.owner || ')', ', ' ORDER BY m.address)
                    INTO refused, owners FROM grove_machines m
                    WHERE m.topology = p_topology AND m.address = ANY(p_address || p_j_address || p_t_address) AND m.owner <> p_worker;
                IF refused IS NOT NULL THEN
                    RAISE EXCEPTION 'worker % of topology % cannot write %', p_worker, p_topology, owners
                        USING ERRCODE = 'GR002', DETAIL = to_json(refused)::text;
                END IF;
            END IF;
            IF cardinality(p_removed) > 0 THEN
                DELETE FROM grove_journal j USING grove_machines m
                    WHERE m.topology = p_topology AND m.address = ANY(p_removed) AND m.owner = p_worker
                    AND j.topology = m.topology AND j.address = m.address;
                DELETE FROM grove_journal WHERE topology = p_topology AND address = ANY(p_removed) AND writer = p_worker
                    AND NOT EXISTS (SELECT 1 FROM grove_machines m WHERE m.topology = p_topology AND m.address = grove_journal.address);
                DELETE FROM grove_machines WHERE topology = p_topology AND address = ANY(p_removed) AND owner = p_worker;
            END IF;
            IF cardinality(p_address) > 0 THEN
                INSERT INTO grove_machines (topology, address, owner, type, snapshot, sequence)
                    SELECT p_topology, r.a, p_worker, r.t, r.s, r.q FROM unnest(p_address, p_type, p_snapshot, p_sequence) AS r(a, t, s, q)
                    ON CONFLICT (topology, address) DO UPDATE
                        SET type = excluded.type, snapshot = excluded.snapshot, sequence = excluded.sequence
                        WHERE grove_machines.owner = p_worker;
                GET DIAGNOSTICS written = ROW_COUNT;
                IF written <> cardinality(p_address) THEN
                    -- A row another worker inserted since the check above (its first record).
                    SELECT array_agg(m.address ORDER BY m.address), string_agg(m.address || ' (owned by ' || m.owner || ')', ', ' ORDER BY m.address)
                        INTO refused, owners FROM grove_machines m
                        WHERE m.topology = p_topology AND m.address = ANY(p_address) AND m.owner <> p_worker;
                    RAISE EXCEPTION 'worker % of topology % cannot write %', p_worker, p_topology, owners
                        USING ERRCODE = 'GR002', DETAIL = coalesce(to_json(refused)::text, '[]');
                END IF;
            END IF;
            IF cardinality(p_j_address) > 0 THEN
                IF EXISTS (SELECT 1 FROM unnest(p_j_address, p_j_sequence) AS n(a, s) JOIN grove_journal j
                           ON j.topology = p_topology AND j.address = n.a AND j.sequence >= n.s) THEN
                    RAISE EXCEPTION 'a journal entry of topology % is not after its machine''s last one', p_topology
                        USING ERRCODE = 'GR003';
                END IF;
                INSERT INTO grove_journal (topology, address, sequence, writer, event, time)
                    SELECT p_topology, n.a, n.s, p_worker, n.e, n.t FROM unnest(p_j_address, p_j_sequence, p_j_event, p_j_time) AS n(a, s, e, t);
            END IF;
            IF cardinality(p_t_address) > 0 THEN
                DELETE FROM grove_journal j USING unnest(p_t_address, p_t_through) AS t(a, through)
                    WHERE j.topology = p_topology AND j.address = t.a AND j.sequence <= t.through;
            END IF;
            IF cardinality(p_d_address) > 0 THEN
                INSERT INTO grove_dead_letters (topology, worker, address, type, event, "binary", error, crashes, time)
                    SELECT p_topology, p_worker, d.a, d.t, d.e, d.b, d.r, d.c, d.m
                    FROM unnest(p_d_address, p_d_type, p_d_event, p_d_binary, p_d_error, p_d_crashes, p_d_time) AS d(a, t, e, b, r, c, m);
            END IF;
        END
        $grove$
        """

    /// ``commitFunction`` and then the answers of idempotency keys (``AnswerWindow``), in the
    /// same transaction: those of removed machines this worker owned go, forgotten ones go,
    /// new ones are kept (replacing one of the same address and key). What a worker of an
    /// earlier build calls; this one calls ``probingCommitFunction`` (`_v4`).
    static let answeringCommitFunction = """
        CREATE OR REPLACE FUNCTION grove_commit_v3(
            p_topology text, p_worker text, p_epoch bigint, p_disk boolean, p_removed text[],
            p_address text[], p_type text[], p_snapshot bytea[], p_sequence bigint[],
            p_j_address text[], p_j_sequence bigint[], p_j_event bytea[], p_j_time bigint[],
            p_t_address text[], p_t_through bigint[],
            p_d_address text[], p_d_type text[], p_d_event bytea[], p_d_binary boolean[], p_d_error text[],
            p_d_crashes integer[], p_d_time bigint[],
            p_f_address text[], p_f_client bytea[], p_f_sequence bigint[],
            p_a_address text[], p_a_client bytea[], p_a_sequence bigint[], p_a_slot bigint[], p_a_kind integer[],
            p_a_flags integer[], p_a_payload bytea[]
        ) RETURNS void LANGUAGE plpgsql AS $grove$
        BEGIN
            PERFORM grove_commit_v2(p_topology, p_worker, p_epoch, p_disk, p_removed, p_address, p_type, p_snapshot, p_sequence,
                p_j_address, p_j_sequence, p_j_event, p_j_time, p_t_address, p_t_through,
                p_d_address, p_d_type, p_d_event, p_d_binary, p_d_error, p_d_crashes, p_d_time);
            IF cardinality(p_removed) > 0 THEN
                DELETE FROM grove_answers a WHERE a.topology = p_topology AND a.address = ANY(p_removed)
                    AND NOT EXISTS (SELECT 1 FROM grove_machines m
                                    WHERE m.topology = p_topology AND m.address = a.address AND m.owner <> p_worker);
            END IF;
            IF cardinality(p_f_address) > 0 THEN
                DELETE FROM grove_answers a USING unnest(p_f_address, p_f_client, p_f_sequence) AS f(ad, c, s)
                    WHERE a.topology = p_topology AND a.address = f.ad AND a.client = f.c AND a.sequence = f.s;
            END IF;
            IF cardinality(p_a_address) > 0 THEN
                INSERT INTO grove_answers (topology, address, client, sequence, slot, kind, flags, payload)
                    SELECT p_topology, n.ad, n.c, n.s, n.sl, n.k, n.f, n.p
                    FROM unnest(p_a_address, p_a_client, p_a_sequence, p_a_slot, p_a_kind, p_a_flags, p_a_payload) AS n(ad, c, s, sl, k, f, p)
                    ON CONFLICT (topology, address, client, sequence) DO UPDATE
                        SET slot = excluded.slot, kind = excluded.kind, flags = excluded.flags, payload = excluded.payload;
            END IF;
        END
        $grove$
        """
}
