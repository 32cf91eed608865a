package io.mstar.stack;

/**
 * The usage text of {@code bin/mstar}, one line per command and per option. Self-contained on purpose: {@code bin/mstar
 * help} runs this file with the Java source launcher when the launcher is not built yet, so help never needs Maven.
 */
public final class CliUsage {

    static final String TEXT = """
            usage: bin/mstar [--rebuild] up [--workers N] [--deployment FILE] [--conductor-port P] [--base-port P]
                                            [--topic-prefix X] [--bind ADDRESS] [--timeout SECONDS]
                   bin/mstar status|down|help [--state-dir DIR]
            commands:
              up                  start Kafka, the conductor and N workers, wait until ready, print the URLs (see below)
              status              each recorded process: pid, alive, ready, address (exit 0 all ready, 1 not all, 3 none)
              down                stop exactly what up started (by PID and command line), delete the broker's data
              help                this text (also --help or -h after any command)
            options:
              --workers N         worker processes (default 2; with --deployment, as many as the file places nodes on)
              --deployment FILE   serve this deployment config (docs/models.md) instead of the built-in models;
                                  ONNX files it names relative to itself are found beside it
              --conductor-port P  the conductor's HTTP port (default 8080; 0 = any free port)
              --base-port P       fixed ports: Kafka P, its controller P+1, conductor P+2, worker n P+3+n
              --topic-prefix X    prefix of the stack's Kafka topics (default mstar)
              --bind ADDRESS      what the services' HTTP and tensor servers bind (default 127.0.0.1; Kafka stays on it)
              --timeout SECONDS   how long up waits for readiness (default 180)
              --state-dir DIR     logs, pid records and broker data, for every command (default <repo>/.mstar)
              --rebuild           first argument only: the full Maven build before up (also MSTAR_REBUILD=1)
            up on a recorded stack: all alive, it says so; some dead, it restarts just those with their recorded
            ports and options and keeps the rest; none alive, it starts a fresh stack with the options given.
            """;

    private CliUsage() {
    }

    public static void main(String[] args) {
        System.out.print(TEXT);
    }
}
