"""What a finished job's Workers used (peak memory, GPU use), kept with its history record
for the wizard's advice from history. Depends on 0014; 0015 is another change made at the
same time (the lead sets the dependency to 0015 when both are merged)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("training", "0015_training_curves"),
    ]

    operations = [
        migrations.AddField(
            model_name="jobhistory",
            name="peak_memory_bytes",
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="jobhistory",
            name="gpu_utilization",
            field=models.FloatField(blank=True, null=True),
        ),
    ]
