"""Passages of long memories (memory/domain/chunking.py), each with its vector; their writes go into the vector
change log of migration 0007 like the rows' own, so every process's matrix loads them as a delta."""

import django.db.models.deletion
from django.db import migrations, models

from memory.backends.migration_ops import VendorSQL


LOG_SQL = [
    """CREATE TRIGGER passage_log_ai AFTER INSERT ON memory_passagerow BEGIN
           INSERT INTO node_vec_log(row_id) VALUES (new.node_id);
       END""",
    """CREATE TRIGGER passage_log_ad AFTER DELETE ON memory_passagerow BEGIN
           INSERT INTO node_vec_log(row_id) VALUES (old.node_id);
       END""",
]
LOG_REVERSE = ["DROP TRIGGER IF EXISTS passage_log_ad", "DROP TRIGGER IF EXISTS passage_log_ai"]
PG_LOG_SQL = [
    """CREATE FUNCTION passage_log_row() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
           PERFORM pg_advisory_xact_lock(7303017);
           IF TG_OP = 'DELETE' THEN
               INSERT INTO node_vec_log(row_id) VALUES (OLD.node_id);
           ELSE
               INSERT INTO node_vec_log(row_id) VALUES (NEW.node_id);
           END IF;
           RETURN NULL;
       END $$""",
    """CREATE TRIGGER passage_log_ai AFTER INSERT ON memory_passagerow
       FOR EACH ROW EXECUTE FUNCTION passage_log_row()""",
    """CREATE TRIGGER passage_log_ad AFTER DELETE ON memory_passagerow
       FOR EACH ROW EXECUTE FUNCTION passage_log_row()""",
]
PG_LOG_REVERSE = [
    "DROP TRIGGER IF EXISTS passage_log_ad ON memory_passagerow",
    "DROP TRIGGER IF EXISTS passage_log_ai ON memory_passagerow",
    "DROP FUNCTION IF EXISTS passage_log_row()",
]


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0007_vector_log'),
    ]

    operations = [
        migrations.CreateModel(
            name='PassageRow',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('ordinal', models.IntegerField()),
                ('start', models.IntegerField()),
                ('end', models.IntegerField()),
                ('text_hash', models.CharField(max_length=64)),
                ('vector', models.BinaryField()),
                ('node', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='passages', to='memory.noderow')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('node', 'ordinal'), name='passage_unique_ordinal')],
            },
        ),
        VendorSQL("sqlite", LOG_SQL, LOG_REVERSE),
        VendorSQL("postgresql", PG_LOG_SQL, PG_LOG_REVERSE),
    ]
