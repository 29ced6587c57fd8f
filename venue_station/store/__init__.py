"""The store: SQLAlchemy tables, migrations, reads and writes."""
