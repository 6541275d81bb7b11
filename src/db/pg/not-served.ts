// Kept apart from the PostgreSQL client and migrator so that the SQLite path, which checks for it
// at every start, loads none of them.

/**
 * With NOTESTREAM_DATABASE_URL set, this release serves nothing from PostgreSQL yet: the storage
 * seam that lets every service run on it is the next part of issue 21 (docs/SCALING.md). Only
 * `notestream migrate` uses the URL; everything that would open the database refuses, rather
 * than quietly serving from a SQLite file under the data dir while the operator's data is
 * expected in PostgreSQL.
 */
export class PostgresNotServedError extends Error {
  constructor() {
    super(
      "PostgreSQL serving is not available in this release yet: with NOTESTREAM_DATABASE_URL set only `notestream migrate` runs " +
        "(unset it to use SQLite under the data dir; see docs/SCALING.md)",
    );
  }
}
