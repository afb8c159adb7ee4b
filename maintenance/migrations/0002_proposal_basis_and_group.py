from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("maintenance", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="proposalrow",
            name="basis",
            field=models.JSONField(default=dict),
        ),
        migrations.AddField(
            model_name="proposalrow",
            name="group_key",
            field=models.CharField(blank=True, db_index=True, default="", max_length=80),
        ),
        migrations.AddField(
            model_name="proposalrow",
            name="group_label",
            field=models.CharField(blank=True, default="", max_length=300),
        ),
    ]
